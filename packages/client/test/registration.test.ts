import { generateKeyPair, exportPKCS8, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { ERR, McpAuthClient, MemoryStore, type McpAuthClientOptions } from '../src/index.js';
import { startFakeAs } from './helpers/fake-servers.js';
import { headlessBrowser } from './helpers/harness.js';
import { fakePairs } from './helpers/fake-pair.js';
import { startIdJagEndpoint } from './helpers/fake-idp.js';

const { pair, closeAfter } = fakePairs();
const client = (o: Partial<McpAuthClientOptions> = {}) =>
  new McpAuthClient({ clientName: 'reg test', store: new MemoryStore(), openAuthorizationUrl: headlessBrowser, ...o });

describe('MCP Client Registration priority', () => {
  it('pre-registered credentials for the issuer win over CIMD and DCR', async () => {
    const [as, rs] = await pair({ metadata: { client_id_metadata_document_supported: true } });
    const c = client({
      preRegistered: [{ issuer: as.issuer, client_id: 'pre', client_secret: 's3cret' }],
      clientMetadataUrl: 'https://app.example/client.json',
    });
    expect((await c.fetch(rs.mcpUrl)).status).toBe(200);
    expect(as.registrations).toHaveLength(0);
    expect(as.authorizations[0]!.get('client_id')).toBe('pre');
    expect(as.tokenRequests[0]!.authorization).toBe(`Basic ${Buffer.from('pre:s3cret').toString('base64')}`);
  });

  it('CIMD: the https client_id URL is used when the AS advertises client_id_metadata_document_supported', async () => {
    const [as, rs] = await pair({ metadata: { client_id_metadata_document_supported: true } });
    const c = client({ clientMetadataUrl: 'https://app.example/oauth/client.json' });
    expect((await c.fetch(rs.mcpUrl)).status).toBe(200);
    expect(as.registrations).toHaveLength(0);
    expect(as.authorizations[0]!.get('client_id')).toBe('https://app.example/oauth/client.json');
    expect(as.tokenRequests[0]!.body.get('client_id')).toBe('https://app.example/oauth/client.json');
  });

  it('CIMD is not used when the AS does not advertise it: DCR instead', async () => {
    const [as, rs] = await pair();
    const c = client({ clientMetadataUrl: 'https://app.example/oauth/client.json' });
    expect((await c.fetch(rs.mcpUrl)).status).toBe(200);
    expect(as.registrations).toHaveLength(1);
  });

  it('clientMetadataUrl must be https with a path (CIMD §client requirements)', () => {
    expect(() => client({ clientMetadataUrl: 'http://app.example/client.json' })).toThrowError(
      expect.objectContaining({ code: ERR.INVALID_ARGUMENT }),
    );
    expect(() => client({ clientMetadataUrl: 'https://app.example/' })).toThrowError(
      expect.objectContaining({ code: ERR.INVALID_ARGUMENT }),
    );
  });

  it('DCR: application_type native for the loopback redirect, refresh_token grant, token auth none', async () => {
    const [as, rs] = await pair();
    expect((await client().fetch(rs.mcpUrl)).status).toBe(200);
    const reg = as.registrations[0]!;
    expect(reg).toMatchObject({
      application_type: 'native',
      token_endpoint_auth_method: 'none',
      response_types: ['code'],
      client_name: 'reg test',
    });
    expect(reg.grant_types).toEqual(['authorization_code', 'refresh_token']);
  });

  it('DCR: a rejection is surfaced with the AS error code (MUST handle registration failures)', async () => {
    const [, rs] = await pair({ registration: () => [400, { error: 'invalid_redirect_uri', error_description: 'no loopback' }] });
    await expect(client().fetch(rs.mcpUrl)).rejects.toMatchObject({ code: ERR.REGISTRATION_REJECTED, error: 'invalid_redirect_uri' });
  });

  it('DCR: retries once with the other application_type after a redirect-URI refusal (MAY)', async () => {
    const [as, rs] = await pair({
      registration: (b) =>
        b.application_type === 'native' ? [400, { error: 'invalid_redirect_uri' }] : [201, { client_id: 'web-client' }],
    });
    expect((await client().fetch(rs.mcpUrl)).status).toBe(200);
    expect(as.registrations.map((r) => r.application_type)).toEqual(['native', 'web']);
  });

  it('no CIMD, no DCR: the host callback provides the client', async () => {
    const [as, rs] = await pair({ metadata: { registration_endpoint: undefined } });
    const asked: string[] = [];
    const c = client({
      onRegistrationNeeded: async ({ as: md }) => {
        asked.push(md.issuer);
        return { client_id: 'typed-in' };
      },
    });
    expect((await c.fetch(rs.mcpUrl)).status).toBe(200);
    expect(asked).toEqual([as.issuer]);
    expect(as.authorizations[0]!.get('client_id')).toBe('typed-in');
  });

  it('no way to register → MCP_AUTH_REGISTRATION_UNAVAILABLE', async () => {
    const [, rs] = await pair({ metadata: { registration_endpoint: undefined } });
    await expect(client().fetch(rs.mcpUrl)).rejects.toMatchObject({ code: ERR.REGISTRATION_UNAVAILABLE });
  });
});

describe('MCP Authorization Server Binding', () => {
  it('pre-registered credentials for another AS → clear error, nothing sent to the AS', async () => {
    const [as, rs] = await pair();
    const c = client({ preRegistered: [{ issuer: 'https://other-as.example', client_id: 'pre', client_secret: 'x' }] });
    await expect(c.fetch(rs.mcpUrl)).rejects.toMatchObject({ code: ERR.AS_MISMATCH });
    expect(as.authorizations).toHaveLength(0);
    expect(as.tokenRequests).toHaveLength(0);
  });

  it('PRM names another AS → re-register with it; the first AS client_id and tokens are never sent to the second', async () => {
    const [as1, rs] = await pair();
    const as2 = closeAfter(await startFakeAs());
    const store = new MemoryStore();
    const c = client({ store });
    expect((await c.fetch(rs.mcpUrl)).status).toBe(200);
    const first = (await store.getClient(as1.issuer))!;
    rs.setAs(as2);
    expect((await c.fetch(rs.mcpUrl)).status).toBe(200);
    expect(as2.registrations).toHaveLength(1);
    const second = (await store.getClient(as2.issuer))!;
    expect(second.client_id).not.toBe(first.client_id);
    for (const a of as2.authorizations) expect(a.get('client_id')).not.toBe(first.client_id);
    for (const t of as2.tokenRequests) {
      expect(t.body.get('client_id')).not.toBe(first.client_id);
      expect(t.body.get('refresh_token')).toBeNull();
    }
    // Credentials stay keyed by issuer.
    expect((await store.getClient(as1.issuer))!.client_id).toBe(first.client_id);
  });
});

describe('token endpoint client authentication', () => {
  it('client_secret_post sends the secret in the body, not in a header', async () => {
    const [as, rs] = await pair();
    const c = client({
      preRegistered: [{ issuer: as.issuer, client_id: 'p', client_secret: 'sec', token_endpoint_auth_method: 'client_secret_post' }],
    });
    expect((await c.fetch(rs.mcpUrl)).status).toBe(200);
    expect(as.tokenRequests[0]!.body.get('client_secret')).toBe('sec');
    expect(as.tokenRequests[0]!.authorization).toBeUndefined();
  });

  it('RFC 6749 §2.3.1: Basic credentials are form-encoded before base64', async () => {
    const [as, rs] = await pair();
    const c = client({ preRegistered: [{ issuer: as.issuer, client_id: 'a b:c', client_secret: 'p&ss+' }] });
    expect((await c.fetch(rs.mcpUrl)).status).toBe(200);
    expect(as.tokenRequests[0]!.authorization).toBe(`Basic ${Buffer.from('a+b%3Ac:p%26ss%2B').toString('base64')}`);
  });

  it('private_key_jwt (RFC 7523) signs a client assertion with iss = sub = client_id and aud = issuer', async () => {
    const [as, rs] = await pair();
    const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
    const c = client({
      preRegistered: [
        {
          issuer: as.issuer,
          client_id: 'jwt-client',
          token_endpoint_auth_method: 'private_key_jwt',
          privateKey: { key: await exportPKCS8(privateKey), alg: 'ES256' },
        },
      ],
    });
    expect((await c.fetch(rs.mcpUrl)).status).toBe(200);
    const body = as.tokenRequests[0]!.body;
    expect(body.get('client_assertion_type')).toBe('urn:ietf:params:oauth:client-assertion-type:jwt-bearer');
    const { payload } = await jwtVerify(body.get('client_assertion')!, publicKey, { audience: as.issuer });
    expect(payload.iss).toBe('jwt-client');
    expect(payload.sub).toBe('jwt-client');
  });
});

describe('client credentials grant (extension io.modelcontextprotocol/oauth-client-credentials)', () => {
  it('gets a token without any browser, with resource and the challenged scope', async () => {
    const [as, rs] = await pair({}, { scope: 'basic' });
    const c = new McpAuthClient({ clientName: 'm2m', clientCredentials: { client_id: 'svc', client_secret: 'sec', issuer: as.issuer } });
    expect((await c.fetch(rs.mcpUrl)).status).toBe(200);
    const t = as.tokenRequests[0]!;
    expect(t.body.get('grant_type')).toBe('client_credentials');
    expect(t.body.get('resource')).toBe(rs.mcpUrl);
    expect(t.body.get('scope')).toBe('basic');
    expect(as.authorizations).toHaveLength(0);
  });

  it('MCP Authorization Server Binding: configuring credentials without their issuer is a configuration error', () => {
    const refused = (o: Partial<McpAuthClientOptions>) =>
      expect(() => new McpAuthClient({ clientName: 'm2m', ...o })).toThrowError(expect.objectContaining({ code: ERR.INVALID_ARGUMENT }));
    const assertion = async () => 'x';
    refused({ clientCredentials: { client_id: 'svc', client_secret: 'sec' } as never });
    refused({ clientCredentials: { client_id: 'svc', client_secret: 'sec', issuer: '' } });
    refused({ clientCredentials: { client_id: 'svc', privateKey: { key: 'pem' }, issuer: undefined as never } });
    refused({ clientCredentials: { client_id: 'svc', client_secret: 'sec', issuer: 'http://as.example' } }); // http off loopback
    refused({ clientCredentials: { client_id: 'svc', client_secret: 'sec', issuer: 'https://as.example?x=1' } });
    refused({ clientCredentials: { client_id: 'svc', client_secret: 'sec', issuer: 'https://as.example#f' } });
    refused({ clientCredentials: { client_id: 'svc', client_secret: 'sec', issuer: 'not a url' } });
    refused({ clientCredentials: { client_secret: 'sec', issuer: 'https://as.example' } as never });
    refused({ jwtBearer: { client_id: 'w', assertion } as never });
    refused({ jwtBearer: { client_id: 'w', issuer: 'https://as.example' } as never });
    refused({ preRegistered: [{ client_id: 'p', client_secret: 's' } as never] });
    refused({ preRegistered: [{ client_id: 'p', client_secret: 's', issuer: 'javascript:alert(1)' }] });
    const err = ((): Error | undefined => {
      try {
        new McpAuthClient({ clientName: 'm2m', clientCredentials: { client_id: 'svc', client_secret: 'zq-7f3-value' } as never });
        return undefined;
      } catch (e) {
        return e as Error;
      }
    })();
    expect(err?.message).toContain('"clientCredentials.issuer" is required');
    expect(err?.message).not.toContain('zq-7f3-value');
    // accepted: bound to an https issuer, or an http loopback one
    new McpAuthClient({ clientName: 'm2m', clientCredentials: { client_id: 'svc', client_secret: 'sec', issuer: 'https://as.example' } });
    new McpAuthClient({ clientName: 'm2m', jwtBearer: { client_id: 'w', issuer: 'http://127.0.0.1:1', assertion } });
  });

  it('credentials bound to another issuer are refused', async () => {
    const [as, rs] = await pair();
    const c = new McpAuthClient({
      clientName: 'm2m',
      clientCredentials: { client_id: 'svc', client_secret: 'sec', issuer: 'https://elsewhere.example' },
    });
    await expect(c.fetch(rs.mcpUrl)).rejects.toMatchObject({ code: ERR.AS_MISMATCH });
    expect(as.tokenRequests).toHaveLength(0);
  });
});

describe('JWT bearer grant (RFC 7523) and enterprise-managed authorization (ID-JAG, RFC 8693)', () => {
  it('workload identity: the host assertion is sent as a jwt-bearer grant with resource; no browser', async () => {
    const [as, rs] = await pair({}, { scope: 'basic' });
    const seen: unknown[] = [];
    const c = new McpAuthClient({
      clientName: 'wif',
      jwtBearer: { client_id: 'workload', issuer: as.issuer, assertion: async (ctx) => (seen.push(ctx), 'workload.jwt.value') },
    });
    expect((await c.fetch(rs.mcpUrl)).status).toBe(200);
    expect(seen).toEqual([{ issuer: as.issuer, resource: rs.mcpUrl, scope: 'basic' }]);
    const t = as.tokenRequests[0]!.body;
    expect(t.get('grant_type')).toBe('urn:ietf:params:oauth:grant-type:jwt-bearer');
    expect(t.get('assertion')).toBe('workload.jwt.value');
    expect(t.get('resource')).toBe(rs.mcpUrl);
    expect(t.get('client_id')).toBe('workload');
    expect(as.authorizations).toHaveLength(0);
  });

  it('a refused jwt-bearer grant is surfaced once: no retry, no switch to another grant', async () => {
    const [as, rs] = await pair();
    const c = new McpAuthClient({
      clientName: 'wif',
      jwtBearer: { client_id: 'workload', issuer: as.issuer, assertion: async () => 'x' },
      fetch: async (i, init) => {
        const req = new Request(i, init);
        if (req.url.endsWith('/token')) {
          as.tokenRequests.push({ body: new URLSearchParams(await req.text()), authorization: undefined });
          return new Response(JSON.stringify({ error: 'invalid_grant' }), { status: 400, headers: { 'content-type': 'application/json' } });
        }
        return fetch(req);
      },
    });
    await expect(c.fetch(rs.mcpUrl)).rejects.toMatchObject({ code: ERR.TOKEN_REQUEST_FAILED, error: 'invalid_grant' });
    expect(as.tokenRequests).toHaveLength(1);
    expect(as.authorizations).toHaveLength(0);
  });

  it('enterprise-managed: ID Token → ID-JAG at the IdP (audience = AS issuer, resource = MCP server), then jwt-bearer at the AS', async () => {
    const [as, rs] = await pair();
    const idp = closeAfter(await startIdJagEndpoint());
    const { enterpriseManagedAssertion } = await import('../src/index.js');
    const c = new McpAuthClient({
      clientName: 'ema',
      jwtBearer: {
        client_id: 'mcp-client',
        client_secret: 'mcp-secret',
        issuer: as.issuer,
        assertion: enterpriseManagedAssertion({
          idpTokenEndpoint: `${idp.url}/token`,
          idpClientId: 'idp-client',
          idToken: 'user.id.token',
        }),
      },
    });
    expect((await c.fetch(rs.mcpUrl)).status).toBe(200);
    const x = idp.requests[0]!;
    expect(x.get('grant_type')).toBe('urn:ietf:params:oauth:grant-type:token-exchange');
    expect(x.get('requested_token_type')).toBe('urn:ietf:params:oauth:token-type:id-jag');
    expect(x.get('subject_token_type')).toBe('urn:ietf:params:oauth:token-type:id_token');
    expect(x.get('subject_token')).toBe('user.id.token');
    expect(x.get('audience')).toBe(as.issuer);
    expect(x.get('resource')).toBe(rs.mcpUrl);
    expect(x.get('client_id')).toBe('idp-client');
    const t = as.tokenRequests[0]!;
    expect(t.body.get('grant_type')).toBe('urn:ietf:params:oauth:grant-type:jwt-bearer');
    expect(t.body.get('assertion')).toBe('id-jag.jwt');
    expect(t.authorization).toBe(`Basic ${Buffer.from('mcp-client:mcp-secret').toString('base64')}`);
  });
});

describe('Client ID Metadata Document builder (MCP Client Registration → CIMD client requirements)', () => {
  it('has client_id equal to the URL, client_name, redirect_uris, token auth none; native for loopback redirects', async () => {
    const { buildClientMetadataDocument } = await import('../src/index.js');
    const doc = buildClientMetadataDocument({
      clientId: 'https://app.example/oauth/client.json',
      clientName: 'App',
      redirectUris: ['http://127.0.0.1/callback'],
    });
    expect(doc).toMatchObject({
      client_id: 'https://app.example/oauth/client.json',
      client_name: 'App',
      redirect_uris: ['http://127.0.0.1/callback'],
      token_endpoint_auth_method: 'none',
      application_type: 'native',
      grant_types: ['authorization_code', 'refresh_token'],
    });
  });
  it('refuses a client_id that is not https with a path, and non-loopback http redirects', async () => {
    const { buildClientMetadataDocument } = await import('../src/index.js');
    for (const clientId of ['http://app.example/c.json', 'https://app.example/', 'https://app.example/c.json#x', 'app.example/c.json'])
      expect(() => buildClientMetadataDocument({ clientId, clientName: 'A', redirectUris: ['http://127.0.0.1/cb'] })).toThrowError(
        expect.objectContaining({ code: ERR.INVALID_ARGUMENT }),
      );
    expect(() =>
      buildClientMetadataDocument({ clientId: 'https://a.example/c.json', clientName: 'A', redirectUris: ['http://evil.example/cb'] }),
    ).toThrowError(expect.objectContaining({ code: ERR.INVALID_ARGUMENT }));
    expect(
      buildClientMetadataDocument({ clientId: 'https://a.example/c.json', clientName: 'A', redirectUris: ['https://a.example/cb'] })
        .application_type,
    ).toBe('web');
  });
});
