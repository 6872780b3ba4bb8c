import { randomBytes, randomUUID } from 'node:crypto';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { createAuthorizationServer, openStore, silentLogger } from '@mcp-auth-kit/authorization-server';
import { freePort } from '@mcp-auth-kit/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
type Store = Awaited<ReturnType<typeof openStore>>;
import { createLoopbackCertificate, startTestIdp, type LoopbackCertificate, type TestIdp } from '@mcp-auth-kit/testing';
import { SignJWT, decodeJwt, exportJWK, generateKeyPair, type CryptoKey, type JWK } from 'jose';
import {
  auditLogger,
  dpopKey,
  dpopPostProof,
  postForm,
  postJson,
  postRegistration,
  startAttackStack,
  type AttackStack,
  type JsonResponse,
} from './helpers/support.js';

/**
 * The RFC 7523 §2.1 JWT bearer grant with a client's own assertion (the "JWT Bearer Assertions
 * (recommended)" credential of the MCP client credentials extension): every check of RFC 7523 §3
 * is tried with an assertion that fails exactly that check, in both ways a client may send it —
 * the assertion alone (it authenticates the client, as the extension page shows the request) and
 * with the client's own authentication besides (RFC 7523 §3.1) — and refused without a token.
 */
const GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const SECRET = 'robot-secret-0123456789abcdef';

interface Signer {
  key: CryptoKey;
  jwk: JWK;
}

async function signer(): Promise<Signer> {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  return { key: privateKey, jwk: { ...(await exportJWK(publicKey)), kid: randomUUID(), alg: 'ES256', use: 'sig' } };
}

const keyed = (client_id: string, jwk: JWK, extra: Record<string, unknown> = {}) => ({
  client_id,
  grant_types: [GRANT],
  response_types: [],
  redirect_uris: [],
  token_endpoint_auth_method: 'private_key_jwt',
  jwks: { keys: [jwk] },
  scope: 'notes:read',
  ...extra,
});

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('attack: the client-assertion JWT bearer grant (RFC 7523 §2.1, §3; MCP client credentials extension)', () => {
  let stack: AttackStack;
  let idp: TestIdp;
  let cert: LoopbackCertificate;
  let jwksHost: HttpsServer;
  let robot: Signer;
  let other: Signer;
  let viaUri: Signer;
  let bound: Signer;
  const events: Array<Record<string, unknown>> = [];

  beforeAll(async () => {
    [robot, other, viaUri, bound] = await Promise.all([signer(), signer(), signer(), signer()]);
    idp = await startTestIdp();
    cert = await createLoopbackCertificate();
    jwksHost = createHttpsServer({ key: cert.key, cert: cert.cert }, (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [viaUri.jwk] }));
    });
    await new Promise<void>((r) => jwksHost.listen(0, '127.0.0.1', r));
    const jwksUri = `https://127.0.0.1:${(jwksHost.address() as AddressInfo).port}/jwks.json`;
    stack = await startAttackStack({
      cimdAllowPrivateNetwork: true,
      quiet: false,
      logger: auditLogger(events),
      authorizationServer: {
        cimd: { allowPrivateNetwork: true, extraCaCertificates: cert.cert },
        clients: [
          keyed('robot', robot.jwk),
          keyed('other-robot', other.jwk),
          keyed('uri-robot', viaUri.jwk, { jwks: undefined, jwks_uri: jwksUri }),
          keyed('bound-robot', bound.jwk, { dpop_bound_access_tokens: true }),
          // authenticates with its secret and presents its assertion besides (RFC 7523 §3.1)
          keyed('secret-robot', robot.jwk, { token_endpoint_auth_method: 'client_secret_basic', client_secret: SECRET }),
          keyed('no-grant-robot', robot.jwk, { grant_types: ['client_credentials'] }),
          // named by the IdP's ID-JAGs below
          keyed('agent', robot.jwk, { token_endpoint_auth_method: 'client_secret_basic', client_secret: SECRET }),
        ],
        // dynamic clients may hold the grant for ID-JAGs: never for their own assertions
        idJag: { allowClients: ['dynamic'], trustedIdps: [{ issuer: idp.issuer, jwksUri: idp.jwksUri, clients: ['agent'] }] },
      },
    });
  });
  afterAll(async () => {
    jwksHost?.closeAllConnections();
    jwksHost?.close();
    await stack?.close();
    await idp?.close();
  });

  const now = () => Math.floor(Date.now() / 1000);
  /** An assertion of `clientId` signed by `by`: valid unless `claims` / `header` say otherwise. */
  const assertion = (clientId: string, by: Signer, claims: Record<string, unknown> = {}, header: Record<string, unknown> = {}) =>
    new SignJWT({ iss: clientId, sub: clientId, aud: stack.issuer, jti: randomUUID(), iat: now(), exp: now() + 120, ...claims })
      .setProtectedHeader({ alg: 'ES256', kid: by.jwk.kid, typ: 'JWT', ...header })
      .sign(by.key);
  /** The extension page's request: the assertion alone. */
  const alone = (jwt: string, extra: Record<string, string> = {}, headers: Record<string, string> = {}) =>
    postForm(
      stack.metadata.token_endpoint,
      { grant_type: GRANT, assertion: jwt, scope: 'notes:read', resource: stack.mcpUrl, ...extra },
      headers,
    );
  /** With the client's own authentication besides (client_secret_basic). */
  const withSecret = (jwt: string, clientId = 'secret-robot', extra: Record<string, string> = {}) =>
    postForm(
      stack.metadata.token_endpoint,
      { grant_type: GRANT, assertion: jwt, scope: 'notes:read', resource: stack.mcpUrl, ...extra },
      { authorization: `Basic ${Buffer.from(`${clientId}:${SECRET}`).toString('base64')}` },
    );
  const refused = (res: JsonResponse, error: string, description?: RegExp) => {
    expect(res.status, res.text).toBeGreaterThanOrEqual(400);
    expect(res.body.error, res.text).toBe(error);
    if (description) expect(String(res.body.error_description)).toMatch(description);
    expect(res.body.access_token).toBeUndefined();
  };
  const granted = (res: JsonResponse, clientId: string) => {
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ token_type: 'Bearer', scope: 'notes:read' });
    expect(res.body.refresh_token).toBeUndefined();
    expect(decodeJwt(String(res.body.access_token))).toMatchObject({
      iss: stack.issuer,
      aud: stack.mcpUrl,
      sub: clientId,
      client_id: clientId,
      scope: 'notes:read',
    });
  };

  it('RFC 8414 §2: the AS metadata lists the grant type and private_key_jwt', () => {
    expect(stack.metadata.grant_types_supported).toContain(GRANT);
    expect(stack.metadata.token_endpoint_auth_methods_supported).toContain('private_key_jwt');
  });

  it('the extension page request (assertion alone) gets an access token for the client itself, which the demo MCP server accepts', async () => {
    const res = await alone(await assertion('robot', robot));
    granted(res, 'robot');
    expect(events.some((e) => e.audit === 'client_assertion.accepted' && e.client_id === 'robot')).toBe(true);
    const mcp = await postJson(
      stack.mcpUrl,
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      { authorization: `Bearer ${String(res.body.access_token)}`, accept: 'application/json, text/event-stream' },
    );
    expect(mcp.status, mcp.text).toBe(200);
  });

  it('RFC 7523 §3: aud may be the token endpoint; a client_id naming the client is accepted', async () => {
    granted(await alone(await assertion('robot', robot, { aud: stack.metadata.token_endpoint }), { client_id: 'robot' }), 'robot');
  });

  it('RFC 7523 §3.1: with the client authenticated besides (client_secret_basic), the assertion is checked as the grant', async () => {
    granted(await withSecret(await assertion('secret-robot', robot)), 'secret-robot');
  });

  it('RFC 7591 jwks_uri: the keys are fetched (through the egress policy) and verify the assertion', async () => {
    granted(await alone(await assertion('uri-robot', viaUri)), 'uri-robot');
  });

  it('RFC 7523 §3 item 9: a forged signature (a key the client never registered) → refused', async () => {
    const forger = await signer();
    refused(await alone(await assertion('robot', { ...forger, jwk: robot.jwk })), 'invalid_client');
    refused(await withSecret(await assertion('secret-robot', { ...forger, jwk: robot.jwk })), 'invalid_grant', /signature/);
    // one byte of the signature changed
    const jwt = await assertion('secret-robot', robot);
    const tampered = `${jwt.slice(0, -6)}${jwt.slice(-6, -5) === 'A' ? 'B' : 'A'}${jwt.slice(-5)}`;
    refused(await withSecret(tampered), 'invalid_grant');
  });

  it("another client's key: an assertion for robot signed by other-robot's registered key → refused", async () => {
    refused(await alone(await assertion('robot', other)), 'invalid_client');
    refused(await withSecret(await assertion('secret-robot', other)), 'invalid_grant', /signature/);
    // other-robot cannot speak for robot: iss / sub must be the authenticated client itself
    refused(await withSecret(await assertion('robot', robot)), 'invalid_grant', /iss must be the client's client_id/);
    refused(
      await withSecret(await assertion('secret-robot', robot, { sub: 'robot' })),
      'invalid_grant',
      /sub must be the client's client_id/,
    );
  });

  it('RFC 7523 §3 item 7: a replayed assertion (same jti) → refused, the first use stands', async () => {
    const jwt = await assertion('robot', robot);
    granted(await alone(jwt), 'robot');
    // oidc-provider's client authentication refuses it first (its own one-time jti record)
    refused(await alone(jwt), 'invalid_client');
    const viaSecret = await assertion('secret-robot', robot);
    granted(await withSecret(viaSecret), 'secret-robot');
    refused(await withSecret(viaSecret), 'invalid_grant', /already been used/);
    // a new assertion with the same jti is the same assertion for replay detection
    const jti = randomUUID();
    granted(await withSecret(await assertion('secret-robot', robot, { jti })), 'secret-robot');
    refused(await withSecret(await assertion('secret-robot', robot, { jti })), 'invalid_grant', /already been used/);
  });

  it('RFC 7523 §3 item 3: wrong audience (another server, a resource, a list with this server) → refused', async () => {
    refused(await alone(await assertion('robot', robot, { aud: 'https://other-as.example' })), 'invalid_client');
    refused(await withSecret(await assertion('secret-robot', robot, { aud: 'https://other-as.example' })), 'invalid_grant', /aud/);
    refused(await withSecret(await assertion('secret-robot', robot, { aud: stack.mcpUrl })), 'invalid_grant', /aud/);
    refused(await alone(await assertion('robot', robot, { aud: [stack.issuer, 'https://other-as.example'] })), 'invalid_grant', /alone/);
  });

  it('RFC 7523 §3 items 4-6: expired, exp too far ahead, no exp, nbf and iat in the future, too old → refused', async () => {
    refused(await alone(await assertion('robot', robot, { exp: now() - 120, iat: now() - 240 })), 'invalid_client');
    refused(await withSecret(await assertion('secret-robot', robot, { exp: now() - 120, iat: now() - 240 })), 'invalid_grant', /expired/);
    // oidc-provider's client authentication has no bound on exp: the grant's is ours
    refused(await alone(await assertion('robot', robot, { exp: now() + 3600 })), 'invalid_grant', /too long/);
    refused(await withSecret(await assertion('secret-robot', robot, { exp: undefined })), 'invalid_grant', /no exp/);
    refused(await withSecret(await assertion('secret-robot', robot, { nbf: now() + 200 })), 'invalid_grant', /not valid yet/);
    refused(await withSecret(await assertion('secret-robot', robot, { iat: now() + 200 })), 'invalid_grant', /future/);
    refused(await withSecret(await assertion('secret-robot', robot, { iat: now() - 3600 })), 'invalid_grant', /more than 300 s ago/);
  });

  it('RFC 7523 §3 item 7: no jti → refused (replay could not be detected)', async () => {
    refused(await alone(await assertion('robot', robot, { jti: undefined })), 'invalid_client');
    refused(await withSecret(await assertion('secret-robot', robot, { jti: undefined })), 'invalid_grant', /no jti/);
  });

  it('RFC 8725 §3.8: alg none and HS256 (with the client secret as the key) → refused', async () => {
    const claims = { iss: 'secret-robot', sub: 'secret-robot', aud: stack.issuer, jti: randomUUID(), exp: now() + 60 };
    const none = `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims)}.`;
    refused(await withSecret(none), 'invalid_grant');
    refused(await alone(`${b64({ alg: 'none', typ: 'JWT' })}.${b64({ ...claims, iss: 'robot', sub: 'robot' })}.`), 'invalid_client');
    const hs = await new SignJWT({ ...claims, jti: randomUUID() })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .sign(new TextEncoder().encode(SECRET));
    refused(await withSecret(hs), 'invalid_grant', /signed with one of/);
  });

  it('configured clients only: a dynamically registered client with keys and the grant → unauthorized_client; no grant → unauthorized_client; unknown → invalid_client', async () => {
    const dynamic = await signer();
    const reg = await postRegistration(stack, {
      grant_types: [GRANT],
      response_types: [],
      redirect_uris: [],
      token_endpoint_auth_method: 'private_key_jwt',
      jwks: { keys: [dynamic.jwk] },
    });
    expect(reg.status, reg.text).toBe(201);
    const id = String(reg.body.client_id);
    refused(await alone(await assertion(id, dynamic)), 'unauthorized_client', /only clients configured at this server/);
    refused(await alone(await assertion('no-grant-robot', robot)), 'unauthorized_client', /not registered for/);
    refused(await alone(await assertion('nobody', robot)), 'invalid_client');
  });

  it('public client: a client without authentication cannot use the grant (RFC 6749 §4.4)', async () => {
    const reg = await postRegistration(stack);
    expect(reg.status, reg.text).toBe(201);
    const id = String(reg.body.client_id);
    refused(await alone(await assertion(id, robot), { client_id: id }), 'invalid_client');
  });

  it('typ confusion: an assertion typed as an ID-JAG goes to the ID-JAG checks and is refused there; an IdP-signed JWT typed JWT is no client assertion', async () => {
    // the client's own assertion dressed as an ID-JAG: no client authentication is taken from it
    refused(await alone(await assertion('robot', robot, {}, { typ: 'oauth-id-jag+jwt' })), 'invalid_request');
    refused(
      await withSecret(await assertion('secret-robot', robot, {}, { typ: 'oauth-id-jag+jwt' })),
      'invalid_grant',
      /trusted identity provider/,
    );
    // a real ID-JAG for another client, presented by a keyed client
    const jag = await idp.idJag({ sub: 'U1', aud: stack.issuer, client_id: 'agent', resource: stack.mcpUrl, scope: 'notes:read' });
    refused(await withSecret(jag), 'invalid_grant', /client_id is not the authenticated client/);
    // the IdP signs a JWT naming the client, typed JWT: the client's keys do not verify it
    const forged = await idp.idJag(
      { iss: 'secret-robot', sub: 'secret-robot', aud: stack.issuer, client_id: 'secret-robot' },
      { typ: 'JWT' },
    );
    refused(await withSecret(forged), 'invalid_grant');
    // other JWT kinds signed by the client's own key: not its assertion
    for (const typ of ['dpop+jwt', 'at+jwt', 'client-authentication+jwt']) {
      refused(await withSecret(await assertion('secret-robot', robot, {}, { typ })), 'invalid_grant', /typ/);
    }
  });

  it('RFC 8707: an unknown resource → invalid_target; a scope the client was not configured with → invalid_scope', async () => {
    refused(await alone(await assertion('robot', robot), { resource: 'https://elsewhere.example/mcp' }), 'invalid_target');
    refused(await alone(await assertion('robot', robot), { scope: 'notes:read notes:write' }), 'invalid_scope', /notes:write/);
  });

  it('RFC 9449: a DPoP proof binds the token; a dpop_bound_access_tokens client without a proof is refused before its assertion is used', async () => {
    const key = await dpopKey();
    const proof = () => dpopPostProof(key, stack.metadata.token_endpoint);
    const res = await alone(await assertion('robot', robot), {}, { dpop: await proof() });
    expect(res.status, res.text).toBe(200);
    expect(res.body.token_type).toBe('DPoP');
    expect(decodeJwt(String(res.body.access_token)).cnf).toEqual({ jkt: key.jkt });
    const jwt = await assertion('bound-robot', bound);
    refused(await alone(jwt), 'invalid_dpop_proof', /dpop_bound_access_tokens/);
    const retry = await postForm(
      stack.metadata.token_endpoint,
      { grant_type: GRANT, assertion: await assertion('bound-robot', bound), scope: 'notes:read', resource: stack.mcpUrl },
      { dpop: await proof() },
    );
    expect(retry.status, retry.text).toBe(200);
    expect(decodeJwt(String(retry.body.access_token)).cnf).toEqual({ jkt: key.jkt });
  });

  it('no secret, no assertion in the audit log; refusals are audited with their reason', () => {
    const refusals = events.filter((e) => e.audit === 'client_assertion.refused');
    expect(refusals.map((e) => e.reason)).toEqual(expect.arrayContaining(['signature', 'replay', 'aud', 'exp', 'typ', 'client_source']));
    expect(JSON.stringify(events)).not.toContain(SECRET);
    expect(JSON.stringify(events)).not.toMatch(/eyJ[\w-]+\.eyJ/);
  });

  it('a body that is no form of this grant is left to oidc-provider untouched (long, non-UTF-8, other grants)', async () => {
    const res = await postForm(stack.metadata.token_endpoint, {
      grant_type: 'client_credentials',
      pad: randomBytes(40_000).toString('hex'),
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
  });
});

describe('attack: a client assertion replayed on a second AS instance sharing the store (RFC 7523 §3 item 7)', () => {
  const PG_URL = process.env.TEST_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test';
  const schema = `as_assert_${randomBytes(4).toString('hex')}`;
  const RESOURCE = 'http://127.0.0.1:1/mcp';
  const stores: Store[] = [];
  const servers: Server[] = [];
  const urls: string[] = [];
  let issuer: string;
  let robot: Signer;

  beforeAll(async () => {
    robot = await signer();
    // Both instances answer for one issuer (behind one balancer); each is reached directly here.
    issuer = `http://127.0.0.1:${await freePort()}`;
    for (let i = 0; i < 2; i++) {
      const store = await openStore({ kind: 'postgres', url: PG_URL, schema });
      stores.push(store);
      const as = await createAuthorizationServer({
        issuer,
        resources: [{ resource: RESOURCE, scopes: { 'notes:read': 'Read your notes' } }],
        storage: store,
        logger: silentLogger,
        clients: [keyed('robot', robot.jwk, { token_endpoint_auth_method: 'client_secret_basic', client_secret: SECRET })],
      });
      const server = createServer(as.app as unknown as Parameters<typeof createServer>[1]);
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      servers.push(server);
      urls.push(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    }
  });
  afterAll(async () => {
    for (const server of servers) {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
    for (const store of stores) await store.close();
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await client.end();
  });

  it('the first instance issues, the second refuses the same assertion (invalid_grant), whichever way it is sent', async () => {
    const now = Math.floor(Date.now() / 1000);
    const jwt = await new SignJWT({ iss: 'robot', sub: 'robot', aud: issuer, jti: randomUUID(), iat: now, exp: now + 60 })
      .setProtectedHeader({ alg: 'ES256', kid: robot.jwk.kid, typ: 'JWT' })
      .sign(robot.key);
    const send = (url: string, authenticated: boolean) =>
      postForm(
        `${url}/token`,
        { grant_type: GRANT, assertion: jwt, scope: 'notes:read', resource: RESOURCE },
        authenticated ? { authorization: `Basic ${Buffer.from(`robot:${SECRET}`).toString('base64')}` } : {},
      );
    const first = await send(urls[0]!, true);
    expect(first.status, first.text).toBe(200);
    const replay = await send(urls[1]!, true);
    expect(replay.status, replay.text).toBe(400);
    expect(replay.body).toMatchObject({ error: 'invalid_grant' });
    expect(String(replay.body.error_description)).toMatch(/already been used/);
    expect(replay.body.access_token).toBeUndefined();
  });
});
