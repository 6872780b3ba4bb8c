import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Client,
  ClientCredentialsProvider,
  PrivateKeyJwtProvider,
  StreamableHTTPClientTransport,
  type OAuthClientProvider,
} from '@modelcontextprotocol/client';
import { SignJWT, exportJWK, exportPKCS8, generateKeyPair, type CryptoKey, type JWK } from 'jose';
import { startDemoStack, type DemoStack } from '../helpers/stack.js';
import { inspectAccessToken } from '../helpers/jwt.js';
import { JWT_BEARER, machineClient, secretClient } from '../helpers/clients.js';

/**
 * The MCP client credentials extension (spec/extensions/auth-oauth-client-credentials.mdx), driven
 * by the MCP SDK v2 client's own providers (@modelcontextprotocol/client 2.4.0) against our AS
 * and the demo MCP server, on both wires the demo speaks:
 *
 * - `ClientCredentialsProvider`: `client_credentials` with a client secret (`client_secret_basic`);
 * - `PrivateKeyJwtProvider`: the SDK's "JWT private key" variant is `client_credentials` with
 *   `private_key_jwt` client authentication (RFC 7523 §2.2), not the §2.1 grant;
 * - the RFC 7523 §2.1 JWT bearer grant the extension page shows (`grant_type=…jwt-bearer`, the
 *   assertion alone), which the SDK has no provider for: an `OAuthClientProvider` of a few lines
 *   on the SDK's `prepareTokenRequest` hook, with an assertion signed by hand.
 */
const SECRET = 'sdk-machine-secret-0123456789abcdef';

const wires = [
  { name: '2025-11-25 (initialize)', options: {} },
  { name: '2026-07-28 (stateless)', options: { versionNegotiation: { mode: { pin: '2026-07-28' } } } },
] as const;

/** An SDK auth provider for the §2.1 grant: each token request carries a fresh assertion, alone. */
function jwtBearerProvider(clientId: string, issuer: string, key: CryptoKey, kid: string): OAuthClientProvider & { issued: number } {
  let tokens: Parameters<OAuthClientProvider['saveTokens']>[0] | undefined;
  const provider = {
    issued: 0,
    get redirectUrl() {
      return undefined;
    },
    clientMetadata: {
      client_name: clientId,
      redirect_uris: [],
      grant_types: [JWT_BEARER],
      token_endpoint_auth_method: 'private_key_jwt',
      scope: 'notes:read',
    },
    clientInformation: () => ({ client_id: clientId, issuer }),
    tokens: () => tokens,
    saveTokens: (t: typeof tokens) => {
      tokens = t;
    },
    redirectToAuthorization: () => {
      throw new Error('no user: no authorization redirect');
    },
    saveCodeVerifier: () => {},
    codeVerifier: () => {
      throw new Error('no code flow');
    },
    // the assertion is the credential: nothing else goes with it
    addClientAuthentication: async () => {},
    async prepareTokenRequest(scope?: string) {
      const now = Math.floor(Date.now() / 1000);
      const assertion = await new SignJWT({ iss: clientId, sub: clientId, aud: issuer, jti: randomUUID(), iat: now, exp: now + 60 })
        .setProtectedHeader({ alg: 'ES256', kid, typ: 'JWT' })
        .sign(key);
      provider.issued++;
      return new URLSearchParams({ grant_type: JWT_BEARER, assertion, ...(scope && { scope }) });
    },
  };
  return provider as unknown as OAuthClientProvider & { issued: number };
}

describe.each(wires)('e2e: the MCP SDK v2 client with client credentials, $name wire', ({ options }) => {
  let stack: DemoStack;
  let rsaPem: string;
  let rsaJwk: JWK;
  let ecKey: CryptoKey;
  let ecJwk: JWK;

  beforeAll(async () => {
    const rsa = await generateKeyPair('RS256', { extractable: true });
    rsaPem = await exportPKCS8(rsa.privateKey);
    rsaJwk = { ...(await exportJWK(rsa.publicKey)), kid: 'sdk-rsa', alg: 'RS256', use: 'sig' };
    const ec = await generateKeyPair('ES256');
    ecKey = ec.privateKey;
    ecJwk = { ...(await exportJWK(ec.publicKey)), kid: 'sdk-ec', alg: 'ES256', use: 'sig' };
    stack = await startDemoStack({
      asConfig: () => ({
        clients: [
          secretClient('sdk-secret', SECRET, ['client_credentials'], { scope: 'notes:read' }),
          machineClient('sdk-private-key', {
            grant_types: ['client_credentials'],
            token_endpoint_auth_method: 'private_key_jwt',
            jwks: { keys: [rsaJwk] },
          }),
          machineClient('sdk-assertion', {
            grant_types: [JWT_BEARER],
            token_endpoint_auth_method: 'private_key_jwt',
            jwks: { keys: [ecJwk] },
          }),
        ],
      }),
    });
  });
  afterAll(async () => stack?.close());

  /** Connects with `authProvider`, calls whoami, returns its text and the token the provider holds. */
  async function whoami(authProvider: OAuthClientProvider): Promise<{ text: string; token: string }> {
    const client = new Client({ name: 'e2e-sdk-v2-machine', version: '1.0.0' }, options as never);
    const transport = new StreamableHTTPClientTransport(new URL(stack.mcpUrl), { authProvider });
    await client.connect(transport);
    const result = await client.callTool({ name: 'whoami', arguments: {} });
    await client.close();
    const token = (await authProvider.tokens())?.access_token;
    expect(token).toBeTypeOf('string');
    return { text: JSON.stringify(result), token: token! };
  }

  const forClient = (token: string, clientId: string) => {
    const { header, claims } = inspectAccessToken(token);
    expect(header.typ).toBe('at+jwt');
    expect(claims).toMatchObject({ iss: stack.issuer, aud: stack.mcpUrl, sub: clientId, client_id: clientId, scope: 'notes:read' });
  };

  it('ClientCredentialsProvider (client secret, client_credentials): token from our AS, whoami on the demo', async () => {
    const provider = new ClientCredentialsProvider({
      clientId: 'sdk-secret',
      clientSecret: SECRET,
      expectedIssuer: stack.issuer,
      scope: 'notes:read',
    });
    const { text, token } = await whoami(provider);
    forClient(token, 'sdk-secret');
    expect(text).toContain('sdk-secret');
    expect(text).toContain('notes:read');
  });

  it('PrivateKeyJwtProvider (client_credentials with private_key_jwt, RFC 7523 §2.2): token from our AS, whoami on the demo', async () => {
    const provider = new PrivateKeyJwtProvider({
      clientId: 'sdk-private-key',
      privateKey: rsaPem,
      algorithm: 'RS256',
      expectedIssuer: stack.issuer,
      scope: 'notes:read',
    });
    const { text, token } = await whoami(provider);
    forClient(token, 'sdk-private-key');
    expect(text).toContain('sdk-private-key');
  });

  it('the RFC 7523 §2.1 JWT bearer grant (the assertion alone, as the extension page shows it): token from our AS, whoami on the demo', async () => {
    const provider = jwtBearerProvider('sdk-assertion', stack.issuer, ecKey, 'sdk-ec');
    const { text, token } = await whoami(provider);
    expect(provider.issued).toBe(1);
    forClient(token, 'sdk-assertion');
    expect(text).toContain('sdk-assertion');
  });
});
