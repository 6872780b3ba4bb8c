// The client credentials extension's recommended credential: the RFC 7523 §2.1 JWT bearer
// authorization grant with an assertion the client signs itself (spec/extensions/
// auth-oauth-client-credentials.mdx §JWT Bearer Assertions; RFC 7523 §3 claims).
import { decodeProtectedHeader, exportPKCS8, generateKeyPair, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { ERR, McpAuthClient } from '../src/index.js';
import { CLIENT_ASSERTION_LIFETIME_SECONDS } from '../src/client-assertion.js';
import { fakePairs } from './helpers/fake-pair.js';

const { pair } = fakePairs();
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

async function keys(alg: 'ES256' | 'RS256' = 'ES256') {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { pem: await exportPKCS8(privateKey), publicKey };
}

describe('RFC 7523 §2.1 assertion grant signed by the client (clientCredentials.grant = "jwt_bearer")', () => {
  it('sends grant_type=jwt-bearer with iss = sub = client_id, aud = the AS issuer, a short exp, a jti; no browser, no secret', async () => {
    const [as, rs] = await pair({}, { scope: 'basic' });
    const { pem, publicKey } = await keys();
    const c = new McpAuthClient({
      clientName: 'm2m',
      clientCredentials: { client_id: 'svc', issuer: as.issuer, grant: 'jwt_bearer', privateKey: { key: pem, alg: 'ES256', kid: 'k1' } },
    });
    expect((await c.fetch(rs.mcpUrl)).status).toBe(200);
    const t = as.tokenRequests[0]!;
    expect(t.body.get('grant_type')).toBe(JWT_BEARER);
    expect(t.body.get('resource')).toBe(rs.mcpUrl);
    expect(t.body.get('scope')).toBe('basic');
    expect(t.body.get('client_id')).toBe('svc');
    // the assertion is the grant: no second client authentication unless configured
    expect(t.body.get('client_assertion')).toBeNull();
    expect(t.authorization).toBeUndefined();
    const assertion = t.body.get('assertion')!;
    expect(decodeProtectedHeader(assertion)).toEqual({ alg: 'ES256', typ: 'JWT', kid: 'k1' });
    const { payload } = await jwtVerify(assertion, publicKey, { issuer: 'svc', subject: 'svc', audience: as.issuer, typ: 'JWT' });
    expect(payload.exp! - payload.iat!).toBe(CLIENT_ASSERTION_LIFETIME_SECONDS);
    expect(CLIENT_ASSERTION_LIFETIME_SECONDS).toBeLessThanOrEqual(300);
    expect(payload.jti).toMatch(/^[0-9a-f-]{36}$/);
    expect(as.authorizations).toHaveLength(0);
  });

  it('each grant gets a new assertion (fresh jti: an AS refuses a replayed one, RFC 7523 §3 item 7)', async () => {
    const [as, rs] = await pair();
    const { pem } = await keys('RS256');
    const c = new McpAuthClient({
      clientName: 'm2m',
      clientCredentials: { client_id: 'svc', issuer: as.issuer, grant: 'jwt_bearer', privateKey: { key: pem, alg: 'RS256' } },
    });
    await c.authorize(rs.mcpUrl);
    await c.authorize(rs.mcpUrl, { scope: 'other' });
    const [a, b] = as.tokenRequests.map((r) => r.body.get('assertion')!);
    expect(a).not.toBe(b);
    const jti = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString()).jti;
    expect(jti(a!)).not.toBe(jti(b!));
  });

  it('token_endpoint_auth_method private_key_jwt adds client authentication with its own assertion', async () => {
    const [as, rs] = await pair();
    const { pem } = await keys();
    const c = new McpAuthClient({
      clientName: 'm2m',
      clientCredentials: {
        client_id: 'svc',
        issuer: as.issuer,
        grant: 'jwt_bearer',
        token_endpoint_auth_method: 'private_key_jwt',
        privateKey: { key: pem, alg: 'ES256' },
      },
    });
    await c.authorize(rs.mcpUrl);
    const body = as.tokenRequests[0]!.body;
    expect(body.get('grant_type')).toBe(JWT_BEARER);
    expect(body.get('client_assertion_type')).toBe('urn:ietf:params:oauth:client-assertion-type:jwt-bearer');
    expect(body.get('client_assertion')).not.toBe(body.get('assertion'));
  });

  it('the credentials stay bound to their issuer: another AS gets no assertion (MCP Authorization Server Binding)', async () => {
    const [as, rs] = await pair();
    const { pem } = await keys();
    const c = new McpAuthClient({
      clientName: 'm2m',
      clientCredentials: { client_id: 'svc', issuer: 'https://elsewhere.example', grant: 'jwt_bearer', privateKey: { key: pem } },
    });
    await expect(c.fetch(rs.mcpUrl)).rejects.toMatchObject({ code: ERR.AS_MISMATCH });
    expect(as.tokenRequests).toHaveLength(0);
  });

  it('is refused before anything is sent without a private key, or with an unknown grant', () => {
    const refused = (cc: object) =>
      expect(
        () =>
          new McpAuthClient({ clientName: 'm2m', clientCredentials: { client_id: 'svc', issuer: 'https://as.example', ...cc } as never }),
      ).toThrowError(expect.objectContaining({ code: ERR.INVALID_ARGUMENT }));
    refused({ grant: 'jwt_bearer', client_secret: 'sec' });
    refused({ grant: 'password', client_secret: 'sec' });
  });
});
