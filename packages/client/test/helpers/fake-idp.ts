// An enterprise IdP on loopback for SSO and ID-JAG tests: OpenID Connect metadata, an authorization
// endpoint that signs the user in at once (code, state, RFC 9207 iss), a token endpoint that
// redeems the code for a signed ID Token (checking PKCE S256 and the client) and answers the
// RFC 8693 token exchange of that ID Token for an ID-JAG. Every request is recorded.
import { createHash, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { close, listen } from './harness.js';

export interface FakeIdp {
  issuer: string;
  authorizations: URLSearchParams[];
  tokenRequests: { body: URLSearchParams; authorization: string | undefined }[];
  /** The ID Tokens issued, in order. */
  idTokens: string[];
  /** Makes the token exchange refuse with this OAuth error (the organization's policy). */
  refuseExchange?: string;
  /** Claims of the next ID Tokens replaced (a forged or mixed-up ID Token). */
  tamper?: { nonce?: string; aud?: string; iss?: string; exp?: number };
  close(): Promise<void>;
}

export const IDP_CLIENT_ID = 'cli-at-idp';
export const IDP_CLIENT_SECRET = 'idp-secret-7f3a';

/**
 * `subject`: who signs in. `asClientId`: the client's id at the MCP authorization servers (the
 * ID-JAG's `client_id`, draft-ietf-oauth-identity-assertion-authz-grant §3). `client`: the one
 * client of the IdP (client_secret_basic).
 */
export async function startFakeIdp(
  subject = 'alice@corp.example',
  asClientId = 'mcp-cli',
  client: { id: string; secret: string } = { id: IDP_CLIENT_ID, secret: IDP_CLIENT_SECRET },
): Promise<FakeIdp> {
  const server = createServer();
  const issuer = await listen(server);
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = { ...(await exportJWK(publicKey)), kid: 'idp-1', alg: 'ES256', use: 'sig' };
  const codes = new Map<string, { challenge: string; nonce: string; redirectUri: string }>();
  const idp: FakeIdp = { issuer, authorizations: [], tokenRequests: [], idTokens: [], close: () => close(server) };
  const basic = `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}`;
  server.on('request', async (req, res) => {
    const url = new URL(req.url!, issuer);
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const send = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (url.pathname === '/.well-known/openid-configuration' || url.pathname === '/.well-known/oauth-authorization-server') {
      return send(200, {
        issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        code_challenge_methods_supported: ['S256'],
        authorization_response_iss_parameter_supported: true,
        response_types_supported: ['code'],
        id_token_signing_alg_values_supported: ['ES256'],
        grant_types_supported: ['authorization_code', 'urn:ietf:params:oauth:grant-type:token-exchange'],
        jwks_uri: `${issuer}/jwks`,
      });
    }
    if (url.pathname === '/authorize') {
      const q = url.searchParams;
      idp.authorizations.push(q);
      const code = randomUUID();
      codes.set(code, { challenge: q.get('code_challenge')!, nonce: q.get('nonce')!, redirectUri: q.get('redirect_uri')! });
      const target = new URL(q.get('redirect_uri')!);
      target.searchParams.set('code', code);
      target.searchParams.set('state', q.get('state')!);
      target.searchParams.set('iss', issuer);
      return res.writeHead(302, { location: target.href }).end();
    }
    if (url.pathname === '/token') {
      const body = new URLSearchParams(Buffer.concat(chunks).toString());
      idp.tokenRequests.push({ body, authorization: req.headers.authorization });
      if (req.headers.authorization !== basic) return send(401, { error: 'invalid_client' });
      if (body.get('grant_type') === 'authorization_code') {
        const pending = codes.get(body.get('code') ?? '');
        codes.delete(body.get('code') ?? '');
        const verifier = body.get('code_verifier') ?? '';
        const challenge = createHash('sha256').update(verifier).digest('base64url');
        if (!pending || pending.challenge !== challenge || pending.redirectUri !== body.get('redirect_uri')) {
          return send(400, { error: 'invalid_grant' });
        }
        const t = idp.tamper ?? {};
        const idToken = await new SignJWT({ nonce: t.nonce ?? pending.nonce })
          .setProtectedHeader({ alg: 'ES256', kid: 'idp-1' })
          .setIssuer(t.iss ?? issuer)
          .setSubject(subject)
          .setAudience(t.aud ?? client.id)
          .setIssuedAt()
          .setExpirationTime(t.exp ?? '10m')
          .sign(privateKey);
        idp.idTokens.push(idToken);
        return send(200, { access_token: randomUUID(), token_type: 'Bearer', expires_in: 600, id_token: idToken });
      }
      if (body.get('grant_type') === 'urn:ietf:params:oauth:grant-type:token-exchange') {
        if (idp.refuseExchange) return send(400, { error: idp.refuseExchange, error_description: 'not allowed by policy' });
        if (!idp.idTokens.includes(body.get('subject_token') ?? '')) return send(400, { error: 'invalid_grant' });
        // draft-ietf-oauth-identity-assertion-authz-grant §3: the ID-JAG, typed, for the AS and resource asked
        const idJag = await new SignJWT({
          client_id: asClientId,
          resource: body.get('resource'),
          ...(body.get('scope') && { scope: body.get('scope') }),
        })
          .setProtectedHeader({ alg: 'ES256', kid: 'idp-1', typ: 'oauth-id-jag+jwt' })
          .setIssuer(issuer)
          .setSubject(subject)
          .setAudience(body.get('audience') ?? '')
          .setIssuedAt()
          .setExpirationTime('5m')
          .setJti(randomUUID())
          .sign(privateKey);
        return send(200, {
          access_token: idJag,
          issued_token_type: 'urn:ietf:params:oauth:token-type:id-jag',
          token_type: 'N_A',
        });
      }
      return send(400, { error: 'unsupported_grant_type' });
    }
    if (url.pathname === '/jwks') return send(200, { keys: [jwk] });
    return send(404, { error: 'not_found' });
  });
  return idp;
}

/**
 * Only an IdP's token endpoint, at `${url}/token`: answers every request with the same ID-JAG
 * (`id-jag.jwt`) and records each request's form, for tests of what the client sends and declares.
 */
export async function startIdJagEndpoint(): Promise<{ url: string; requests: URLSearchParams[]; close(): Promise<void> }> {
  const requests: URLSearchParams[] = [];
  const server = createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    requests.push(new URLSearchParams(body));
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ access_token: 'id-jag.jwt', issued_token_type: 'urn:ietf:params:oauth:token-type:id-jag', token_type: 'N_A' }));
  });
  return { url: await listen(server), requests, close: () => close(server) };
}
