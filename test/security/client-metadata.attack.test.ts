import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey } from 'jose';
import { startAuthServer } from '@mcp-auth-kit/auth-server';
import { silentLogger } from '@mcp-auth-kit/authorization-server';
import { createLoopbackCertificate, type LoopbackCertificate } from '@mcp-auth-kit/testing';
import {
  NATIVE_REDIRECT,
  authorizationUrl,
  callTool,
  frontChannel,
  pkcePair,
  postForm,
  postJson,
  registerClient,
  startAttackStack,
  type AttackStack,
} from './helpers/support.js';

/**
 * Client metadata from untrusted sources — a Client ID Metadata Document, a DCR body, an RFC 7592
 * update — must not buy a grant without a user nor set the AS's internal client properties.
 * RFC 6749 §4.4: client_credentials is for confidential clients the AS knows; RFC 7591 §2/§3.2.2:
 * the AS decides which metadata it accepts. Only loopback: the document host is our own listener,
 * with the dev private-network switch on (loopback issuer).
 */

const SERVICE = { id: 'svc-notes', secret: 'svc-notes-secret-0123456789' };
const INTERNAL_PROPERTY = 'mcp_resource_scope';

/** One MCP tools/call of `add_note` (needs notes:write) on the 2025-11-25 wire. */
const addNote = (mcpUrl: string, token: string): Promise<Response> =>
  callTool(mcpUrl, token, { name: 'add_note', arguments: { text: 'written by a machine' } });

describe('attack: client metadata from untrusted sources (CIMD, DCR, RFC 7592)', () => {
  let stack: AttackStack;
  let cert: LoopbackCertificate;
  let host: HttpsServer;
  let origin: string;
  let signingKey: CryptoKey;
  const documents = new Map<string, (url: string) => Record<string, unknown>>();

  beforeAll(async () => {
    cert = await createLoopbackCertificate();
    const keys = await generateKeyPair('ES256', { extractable: true });
    signingKey = keys.privateKey as CryptoKey;
    const publicJwk = { ...(await exportJWK(keys.publicKey)), kid: 'attacker-key', alg: 'ES256', use: 'sig' };

    host = createHttpsServer({ cert: cert.cert, key: cert.key }, (req, res) => {
      const path = new URL(req.url ?? '/', 'https://x').pathname;
      const make = documents.get(path);
      if (!make) return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify(make(`${origin}${path}`)));
    });
    await new Promise<void>((r) => host.listen(0, '127.0.0.1', r));
    origin = `https://127.0.0.1:${(host.address() as AddressInfo).port}`;

    const base = (url: string) => ({
      client_id: url,
      client_name: 'hostile machine',
      redirect_uris: [NATIVE_REDIRECT],
      response_types: ['code'],
    });
    // The finding, verbatim: a public CIMD client asking for the machine grant and every resource scope.
    documents.set('/cc.json', (url) => ({
      ...base(url),
      grant_types: ['authorization_code', 'client_credentials'],
      token_endpoint_auth_method: 'none',
      scope: 'notes:read notes:write',
    }));
    // The internal property that limits client_credentials tokens, set by the document itself.
    documents.set('/internal.json', (url) => ({
      ...base(url),
      grant_types: ['authorization_code', 'client_credentials'],
      token_endpoint_auth_method: 'none',
      [INTERNAL_PROPERTY]: 'notes:read notes:write',
    }));
    documents.set('/internal-only.json', (url) => ({
      ...base(url),
      grant_types: ['authorization_code'],
      token_endpoint_auth_method: 'none',
      [INTERNAL_PROPERTY]: 'notes:write',
    }));
    // Authenticated (private_key_jwt) but not configured by the operator: still no machine grant.
    documents.set('/cc-jwt.json', (url) => ({
      ...base(url),
      grant_types: ['authorization_code', 'client_credentials'],
      token_endpoint_auth_method: 'private_key_jwt',
      token_endpoint_auth_signing_alg: 'ES256',
      jwks: { keys: [publicJwk] },
      scope: 'notes:read notes:write',
    }));

    stack = await startAttackStack({
      cimdAllowPrivateNetwork: true,
      authorizationServer: {
        cimd: { allowPrivateNetwork: true, extraCaCertificates: cert.cert },
        clients: [
          {
            client_id: SERVICE.id,
            client_secret: SERVICE.secret,
            grant_types: ['client_credentials'],
            response_types: [],
            redirect_uris: [],
            token_endpoint_auth_method: 'client_secret_basic',
            scope: 'notes:read notes:write',
          },
        ],
      },
    });
  });
  afterAll(async () => {
    host?.closeAllConnections();
    host?.close();
    await stack?.close();
  });

  const clientCredentials = (form: Record<string, string>, headers: Record<string, string> = {}) =>
    postForm(
      stack.metadata.token_endpoint,
      { grant_type: 'client_credentials', resource: stack.mcpUrl, scope: 'notes:read notes:write', ...form },
      headers,
    );

  it('control: the operator-configured confidential client gets a client_credentials token that add_note accepts', async () => {
    const basic = `Basic ${Buffer.from(`${SERVICE.id}:${SERVICE.secret}`).toString('base64')}`;
    const res = await clientCredentials({}, { authorization: basic });
    expect(res.status, res.text).toBe(200);
    const call = await addNote(stack.mcpUrl, res.body.access_token as string);
    expect(call.status).toBe(200);
    expect(await call.text()).not.toMatch(/"isError":\s*true/);
  });

  it('RFC 6749 §4.4: a public CIMD client (auth "none") listing client_credentials gets NO token', async () => {
    const clientId = `${origin}/cc.json`;
    const res = await clientCredentials({ client_id: clientId });
    expect(res.status, res.text).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(res.body.access_token).toBeUndefined();
    expect(['invalid_request', 'unauthorized_client', 'invalid_client', 'invalid_client_metadata']).toContain(res.body.error);
  });

  it('the same CIMD document still works for the user-delegated flow (the machine grant is dropped, not the client)', async () => {
    const result = await frontChannel(
      stack.issuer,
      authorizationUrl(stack, { clientId: `${origin}/cc.json`, challenge: pkcePair().challenge }),
    );
    expect(result.kind).toBe('callback');
    expect((result as { url: URL }).url.searchParams.get('code')).toBeTruthy();
  });

  it('RFC 6749 §4.4: an authenticated (private_key_jwt) CIMD client the operator did not configure gets NO client_credentials token', async () => {
    const clientId = `${origin}/cc-jwt.json`;
    const assertion = await new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', kid: 'attacker-key' })
      .setIssuer(clientId)
      .setSubject(clientId)
      .setAudience(stack.issuer)
      .setJti(crypto.randomUUID())
      .setIssuedAt()
      .setExpirationTime('1m')
      .sign(signingKey);
    const res = await clientCredentials({
      client_id: clientId,
      client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
      client_assertion: assertion,
    });
    expect(res.status, res.text).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(res.body.access_token).toBeUndefined();
  });

  it(`internal property ${INTERNAL_PROPERTY} in a CIMD document → no token, and the document is refused as a whole`, async () => {
    const res = await clientCredentials({ client_id: `${origin}/internal.json` });
    expect(res.status, res.text).toBeGreaterThanOrEqual(400);
    expect(res.body.access_token).toBeUndefined();
    for (const path of ['/internal.json', '/internal-only.json']) {
      const result = await frontChannel(
        stack.issuer,
        authorizationUrl(stack, { clientId: `${origin}${path}`, challenge: pkcePair().challenge }),
      );
      expect(result.kind, path).toBe('stopped');
      const stopped = result as { status: number; body: string };
      expect(stopped.status).toBe(400);
      expect(stopped.body).toContain('invalid_client_metadata');
    }
  });

  it(`RFC 7591 §3.2.2: ${INTERNAL_PROPERTY} in a DCR body → invalid_client_metadata, nothing registered`, async () => {
    for (const extra of [{}, { scope: 'notes:read' }]) {
      const res = await postJson(stack.metadata.registration_endpoint, {
        client_name: 'dcr internal',
        redirect_uris: [NATIVE_REDIRECT],
        token_endpoint_auth_method: 'none',
        [INTERNAL_PROPERTY]: 'notes:read notes:write',
        ...extra,
      });
      expect(res.status, res.text).toBe(400);
      expect(res.body.error).toBe('invalid_client_metadata');
      expect(res.body.error_description).toContain(INTERNAL_PROPERTY);
      expect(res.body.client_id).toBeUndefined();
    }
  });

  it('RFC 7591 §3.2.2: client_credentials with auth "none" by DCR → invalid_client_metadata', async () => {
    const res = await postJson(stack.metadata.registration_endpoint, {
      client_name: 'dcr machine',
      redirect_uris: [NATIVE_REDIRECT],
      grant_types: ['authorization_code', 'client_credentials'],
      token_endpoint_auth_method: 'none',
      scope: 'notes:read notes:write',
    });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error).toBe('invalid_client_metadata');
  });

  it(`a DCR client registering resource scopes never carries ${INTERNAL_PROPERTY} (it is not a wire field)`, async () => {
    const res = await postJson(stack.metadata.registration_endpoint, {
      client_name: 'dcr scopes',
      redirect_uris: [NATIVE_REDIRECT],
      token_endpoint_auth_method: 'none',
      scope: 'notes:read notes:write',
    });
    expect(res.status, res.text).toBe(201);
    expect(res.body[INTERNAL_PROPERTY]).toBeUndefined();
  });

  it(`RFC 7592 §2.2: an update setting ${INTERNAL_PROPERTY} or client_credentials → invalid_client_metadata, record unchanged`, async () => {
    const reg = await postJson(stack.metadata.registration_endpoint, {
      client_name: 'dcr to update',
      redirect_uris: [NATIVE_REDIRECT],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    });
    expect(reg.status, reg.text).toBe(201);
    const uri = reg.body.registration_client_uri as string;
    let token = reg.body.registration_access_token as string;
    const { registration_client_uri: _u, registration_access_token: _t, client_id_issued_at: _i, ...record } = reg.body;
    for (const change of [
      { [INTERNAL_PROPERTY]: 'notes:read notes:write' },
      { grant_types: ['authorization_code', 'client_credentials'], scope: 'notes:read notes:write' },
    ]) {
      const res = await fetch(uri, {
        method: 'PUT',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ ...record, ...change }),
      });
      const body = (await res.json()) as Record<string, unknown>;
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(body.error).toBe('invalid_client_metadata');
      if (typeof body.registration_access_token === 'string') token = body.registration_access_token;
    }
    const read = await fetch(uri, { headers: { authorization: `Bearer ${token}` } });
    const current = (await read.json()) as Record<string, unknown>;
    expect(read.status).toBe(200);
    expect(current.grant_types).toEqual(['authorization_code']);
    expect(current[INTERNAL_PROPERTY]).toBeUndefined();
    // A public client with no machine grant cannot mint one either way.
    const cc = await clientCredentials({ client_id: reg.body.client_id as string });
    expect(cc.body.access_token).toBeUndefined();
  });

  it('a registered public DCR client asking for client_credentials at /token → refused', async () => {
    const clientId = await registerClient(stack);
    const res = await clientCredentials({ client_id: clientId });
    expect(res.status).toBe(400);
    expect(res.body.access_token).toBeUndefined();
  });
});

describe('operator configuration: machine clients must authenticate (RFC 6749 §4.4)', () => {
  /** Starts (and at once closes) an AS with one pre-registered client; rejects when the config is refused. */
  const start = async (client: Record<string, unknown>) => {
    const running = await startAuthServer({
      port: 0,
      host: '127.0.0.1',
      resource: 'http://127.0.0.1:1/mcp',
      storage: { kind: 'memory' },
      logger: silentLogger,
      authorizationServer: { clients: [client as never] },
    });
    await running.close();
  };

  it('a pre-registered client with client_credentials and auth "none" → refused at start-up', async () => {
    await expect(
      start({
        client_id: 'svc-public',
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
        token_endpoint_auth_method: 'none',
        scope: 'notes:read',
      }),
    ).rejects.toThrow(/clients\[0\].*client_credentials/);
  });

  it(`a pre-registered client naming the internal ${INTERNAL_PROPERTY} → refused at start-up (resource scopes go in scope)`, async () => {
    await expect(
      start({
        client_id: 'svc-internal',
        client_secret: 'svc-internal-secret-0123456789',
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
        [INTERNAL_PROPERTY]: 'notes:write',
      }),
    ).rejects.toThrow(new RegExp(`clients\\[0\\].*${INTERNAL_PROPERTY}`));
  });
});
