import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignJWT, calculateJwkThumbprint, decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair } from 'jose';
import { DEMO_SCOPES, startAuthServer, type RunningAuthServer } from '@mcp-auth-kit/auth-server';
import { silentLogger } from '@mcp-auth-kit/authorization-server';
import {
  NATIVE_REDIRECT,
  codeGrantForm,
  expectOAuthError,
  frontChannel,
  pkcePair,
  postForm,
  postJson,
  type AsMetadata,
  type JsonResponse,
} from './helpers/support.js';
import { listenProtectedEndpoint, post as callEndpoint } from '../faults/helpers/resource-server.js';
import { sharedForSuite } from '../helpers/suite.js';
import { freePort } from '@mcp-auth-kit/test-utils';

/**
 * RFC 7662 introspection of our own JWT access tokens, and what it is for: a resource server
 * learning that a grant ended before the token expires.
 *
 * §2.2: the answer is `{"active": true, …}` for a valid token and `{"active": false}` otherwise
 * (there is no `unsupported_token_type` error); a JWT whose grant is gone is not active.
 * §2.1: the caller authenticates. §4: the AS decides who may see which token — the client the
 * token was issued to, or a resource server's introspection client configured for the token's
 * audience — and an unknown token and a token the caller may not see get the same answer.
 */

const RS_CLIENT = 'rs-introspector';
const RS_SECRET = randomBytes(24).toString('base64url');
const OTHER_RS_CLIENT = 'other-rs-introspector';
const OTHER_RS_SECRET = randomBytes(24).toString('base64url');
const SERVICE_CLIENT = 'svc-machine';
const SERVICE_SECRET = randomBytes(24).toString('base64url');

const basic = (id: string, secret: string) => ({
  authorization: `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`,
});

describe('attack: introspection of JWT access tokens (RFC 7662)', () => {
  const endpoint = sharedForSuite(listenProtectedEndpoint);
  let as: RunningAuthServer;
  let otherResource: string;
  let metadata: AsMetadata;

  beforeAll(async () => {
    otherResource = `http://127.0.0.1:${await freePort()}/mcp`;
    const confidential = {
      grant_types: [] as string[],
      response_types: [],
      redirect_uris: [],
      token_endpoint_auth_method: 'client_secret_basic' as const,
    };
    as = await startAuthServer({
      port: 0,
      host: '127.0.0.1',
      devAutoLogin: 'demo',
      storage: { kind: 'memory' },
      resource: endpoint.resource,
      logger: silentLogger,
      authorizationServer: {
        resources: [
          { resource: endpoint.resource, scopes: DEMO_SCOPES, defaultScopes: ['notes:read'], introspectionClients: [RS_CLIENT] },
          { resource: otherResource, scopes: DEMO_SCOPES, introspectionClients: [OTHER_RS_CLIENT] },
        ],
        clients: [
          { client_id: RS_CLIENT, client_secret: RS_SECRET, ...confidential },
          { client_id: OTHER_RS_CLIENT, client_secret: OTHER_RS_SECRET, ...confidential },
          {
            ...confidential,
            client_id: SERVICE_CLIENT,
            client_secret: SERVICE_SECRET,
            grant_types: ['client_credentials'],
            scope: 'notes:read',
          },
        ],
        registration: { rateLimit: false },
      },
    });
    metadata = (await (await fetch(`${as.issuer}/.well-known/oauth-authorization-server`)).json()) as AsMetadata;
    // The resource server checks every JWT with the AS (cache off: each request asks).
    endpoint.protect(as.issuer, {
      cache: false,
      introspection: { endpoint: metadata.introspection_endpoint!, clientId: RS_CLIENT, clientSecret: RS_SECRET, introspectJwt: true },
    });
  });
  afterAll(async () => as?.close());

  async function register(extra: Record<string, unknown> = {}): Promise<{ client_id: string; client_secret?: string }> {
    const res = await postJson(metadata.registration_endpoint, {
      client_name: 'introspection attack client',
      redirect_uris: [NATIVE_REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      ...extra,
    });
    expect(res.status, res.text).toBe(201);
    return res.body as { client_id: string; client_secret?: string };
  }

  /** Authorization code flow (S256) for a public client; `dpop` adds a proof to the code exchange. */
  async function codeFlow(clientId: string, options: { resource?: string; dpop?: () => Promise<string> } = {}) {
    const { verifier, challenge } = pkcePair();
    const resource = options.resource ?? endpoint.resource;
    const url = new URL(metadata.authorization_endpoint);
    for (const [k, v] of Object.entries({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: NATIVE_REDIRECT,
      scope: 'notes:read',
      state: randomUUID(),
      resource,
      code_challenge: challenge,
      code_challenge_method: 'S256',
    })) {
      url.searchParams.set(k, v);
    }
    const result = await frontChannel(as.issuer, url);
    if (result.kind !== 'callback') throw new Error(`authorization stopped: ${result.status}`);
    const code = result.url.searchParams.get('code')!;
    const form = codeGrantForm({ code, clientId, verifier, resource });
    const res = await postForm(metadata.token_endpoint, form, options.dpop ? { dpop: await options.dpop() } : {});
    expect(res.status, res.text).toBe(200);
    return { tokens: res.body as { access_token: string; refresh_token: string; token_type: string }, form };
  }

  /** RFC 7662 §4 (no oracle): `active: false`, answered exactly as for a token the AS never issued. */
  function expectNothingLearnt(foreign: JsonResponse, unknown: JsonResponse) {
    expect(foreign.status).toBe(200);
    expect(foreign.body).toEqual({ active: false });
    expect({ status: foreign.status, text: foreign.text }).toEqual({ status: unknown.status, text: unknown.text });
  }

  const introspect = (token: string, auth: { clientId: string; secret?: string }): Promise<JsonResponse> =>
    auth.secret
      ? postForm(metadata.introspection_endpoint!, { token }, basic(auth.clientId, auth.secret))
      : postForm(metadata.introspection_endpoint!, { token, client_id: auth.clientId });
  const rs = { clientId: RS_CLIENT, secret: RS_SECRET };
  const otherRs = { clientId: OTHER_RS_CLIENT, secret: OTHER_RS_SECRET };

  it('RFC 7662 §2.2: the client a JWT access token was issued to gets {"active": true} with its claims, not unsupported_token_type', async () => {
    const client = await register();
    const { tokens } = await codeFlow(client.client_id);
    const res = await introspect(tokens.access_token, { clientId: client.client_id });
    expect(res.status, res.text).toBe(200);
    const claims = decodeJwt(tokens.access_token);
    expect(res.body).toMatchObject({
      active: true,
      client_id: client.client_id,
      sub: claims.sub,
      aud: endpoint.resource,
      iss: as.issuer,
      scope: 'notes:read',
      exp: claims.exp,
      iat: claims.iat,
      jti: claims.jti,
      token_type: 'Bearer',
    });
    expect(res.headers.get('cache-control')).toBe('no-store');
  });

  it("RFC 7662 §4: the introspection client configured for the token's resource sees it active; a resource server of another resource gets what an unknown token gets", async () => {
    const client = await register();
    const { tokens } = await codeFlow(client.client_id);
    const mine = await introspect(tokens.access_token, rs);
    expect(mine.status, mine.text).toBe(200);
    expect(mine.body).toMatchObject({ active: true, client_id: client.client_id, aud: endpoint.resource });

    const foreign = await introspect(tokens.access_token, otherRs);
    const unknown = await introspect(`${tokens.access_token.slice(0, -4)}AAAA`, otherRs);
    expectNothingLearnt(foreign, unknown);
  });

  it("RFC 7662 §4 (no oracle): another client — public or confidential — learns nothing about a victim's access token", async () => {
    const victim = await register();
    const { tokens } = await codeFlow(victim.client_id);
    const publicAttacker = await register();
    const confidentialAttacker = await register({
      token_endpoint_auth_method: 'client_secret_basic',
      application_type: 'web',
      redirect_uris: ['https://attacker.example/cb'],
    });
    const forged = await new SignJWT({ ...decodeJwt(tokens.access_token) })
      .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: 'attacker' })
      .sign((await generateKeyPair('ES256')).privateKey);
    for (const caller of [
      { clientId: publicAttacker.client_id },
      { clientId: confidentialAttacker.client_id, secret: confidentialAttacker.client_secret! },
    ]) {
      const foreign = await introspect(tokens.access_token, caller);
      const unknown = await introspect(forged, caller);
      expectNothingLearnt(foreign, unknown);
    }
  });

  it('RFC 9068 §4: a JWT not signed by this AS (same claims, attacker key) is not active, even for the client it names', async () => {
    const client = await register();
    const { tokens } = await codeFlow(client.client_id);
    const { privateKey } = await generateKeyPair('ES256');
    const { kid } = decodeProtectedHeader(tokens.access_token);
    const forged = await new SignJWT({ ...decodeJwt(tokens.access_token) })
      .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid })
      .sign(privateKey);
    const unsigned = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'at+jwt' })).toString('base64url')}.${tokens.access_token.split('.')[1]}.`;
    for (const token of [forged, unsigned]) {
      const res = await introspect(token, { clientId: client.client_id });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ active: false });
      expect((await introspect(token, rs)).body).toEqual({ active: false });
    }
  });

  it('RFC 7662 §2.1: introspecting a JWT still needs client authentication (wrong secret → 401 invalid_client, nothing about the token)', async () => {
    const client = await register();
    const { tokens } = await codeFlow(client.client_id);
    const res = await introspect(tokens.access_token, { clientId: RS_CLIENT, secret: 'not-the-secret' });
    expectOAuthError(res, 'invalid_client', 401);
    expect(res.body.active).toBeUndefined();
    const anonymous = await postForm(metadata.introspection_endpoint!, { token: tokens.access_token });
    expect(anonymous.status).toBe(400);
    expect(anonymous.body.active).toBeUndefined();
  });

  it("RFC 7662 §2.2 + RFC 7009 §2: once the refresh token is revoked, the grant's access token introspects as inactive", async () => {
    const client = await register();
    const { tokens } = await codeFlow(client.client_id);
    expect((await introspect(tokens.access_token, rs)).body.active).toBe(true);
    const revoked = await postForm(metadata.revocation_endpoint!, {
      token: tokens.refresh_token,
      token_type_hint: 'refresh_token',
      client_id: client.client_id,
    });
    expect(revoked.status).toBe(200);
    expect((await introspect(tokens.access_token, rs)).body).toEqual({ active: false });
    expect((await introspect(tokens.access_token, { clientId: client.client_id })).body).toEqual({ active: false });
  });

  it('RFC 6749 §4.1.2 / OAuth 2.1 §4.1.3: a replayed authorization code ends the grant, and its access token introspects as inactive', async () => {
    const client = await register();
    const { tokens, form } = await codeFlow(client.client_id);
    expect((await introspect(tokens.access_token, rs)).body.active).toBe(true);
    const replay = await postForm(metadata.token_endpoint, form);
    expectOAuthError(replay, 'invalid_grant');
    expect((await introspect(tokens.access_token, rs)).body).toEqual({ active: false });
  });

  it('RFC 9449 §6.2: a DPoP-bound access token introspects with token_type DPoP and its cnf.jkt', async () => {
    const client = await register();
    const { publicKey, privateKey } = await generateKeyPair('ES256');
    const jwk = await exportJWK(publicKey);
    const proof = () =>
      new SignJWT({ jti: randomUUID(), htm: 'POST', htu: metadata.token_endpoint, iat: Math.floor(Date.now() / 1000) })
        .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk })
        .sign(privateKey);
    const { tokens } = await codeFlow(client.client_id, { dpop: proof });
    expect(tokens.token_type).toBe('DPoP');
    const res = await introspect(tokens.access_token, rs);
    expect(res.body).toMatchObject({ active: true, token_type: 'DPoP', cnf: { jkt: await calculateJwkThumbprint(jwk) } });
  });

  it("client credentials: the machine client and the resource's introspection client see the token active", async () => {
    const res = await postForm(
      metadata.token_endpoint,
      { grant_type: 'client_credentials', resource: endpoint.resource, scope: 'notes:read' },
      basic(SERVICE_CLIENT, SERVICE_SECRET),
    );
    expect(res.status, res.text).toBe(200);
    const token = res.body.access_token as string;
    expect((await introspect(token, { clientId: SERVICE_CLIENT, secret: SERVICE_SECRET })).body).toMatchObject({
      active: true,
      client_id: SERVICE_CLIENT,
      sub: SERVICE_CLIENT,
    });
    expect((await introspect(token, rs)).body).toMatchObject({ active: true, client_id: SERVICE_CLIENT });
    expect((await introspect(token, otherRs)).body).toEqual({ active: false });
  });

  it('RFC 7662 §2.2 end to end: a resource server introspecting against our AS accepts a live token and refuses it once the grant is revoked', async () => {
    const client = await register();
    const { tokens } = await codeFlow(client.client_id);
    const before = await callEndpoint(endpoint.resource, tokens.access_token);
    expect(before.status).toBe(200);
    const revoked = await postForm(metadata.revocation_endpoint!, { token: tokens.refresh_token, client_id: client.client_id });
    expect(revoked.status).toBe(200);
    // The JWT itself is still unexpired and correctly signed: only introspection can tell.
    expect(decodeJwt(tokens.access_token).exp! * 1000).toBeGreaterThan(Date.now());
    const after = await callEndpoint(endpoint.resource, tokens.access_token);
    expect(after.status).toBe(401);
    expect(after.challenge).toMatch(/error="invalid_token"/);
  });

  it('RFC 9700 §4.14.2 end to end: a rotated refresh token presented by another client ends the grant, and the resource server refuses the access token', async () => {
    const client = await register();
    const { tokens } = await codeFlow(client.client_id);
    const rotated = await postForm(metadata.token_endpoint, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      client_id: client.client_id,
      resource: endpoint.resource,
    });
    expect(rotated.status, rotated.text).toBe(200);
    const access = rotated.body.access_token as string;
    expect((await callEndpoint(endpoint.resource, access)).status).toBe(200);
    const thief = await register();
    const stolen = await postForm(metadata.token_endpoint, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      client_id: thief.client_id,
      resource: endpoint.resource,
    });
    expect(stolen.body.error).toBe('invalid_grant');
    expect((await callEndpoint(endpoint.resource, access)).status).toBe(401);
  });

  it("RFC 7662 §2.2: a disabled user's access token introspects as inactive at once (not at exp), and the resource server refuses it", async () => {
    const client = await register();
    const { tokens } = await codeFlow(client.client_id);
    expect((await introspect(tokens.access_token, rs)).body.active).toBe(true);
    expect((await callEndpoint(endpoint.resource, tokens.access_token)).status).toBe(200);
    const accounts = as.server.store.accounts;
    const sub = decodeJwt(tokens.access_token).sub!;
    await accounts.update(sub, { disabled: true });
    try {
      // still unexpired, correctly signed, and its grant still exists: only the account changed
      expect(decodeJwt(tokens.access_token).exp! * 1000).toBeGreaterThan(Date.now());
      expect((await introspect(tokens.access_token, rs)).body).toEqual({ active: false });
      expect((await introspect(tokens.access_token, { clientId: client.client_id })).body).toEqual({ active: false });
      const refused = await callEndpoint(endpoint.resource, tokens.access_token);
      expect(refused.status).toBe(401);
      expect(refused.challenge).toMatch(/error="invalid_token"/);
      // the refresh token too, for the client it was issued to (oidc-provider's own introspection)
      expect((await introspect(tokens.refresh_token, { clientId: client.client_id })).body).toEqual({ active: false });
    } finally {
      await accounts.update(sub, { disabled: false });
    }
  });

  it('a token for another resource is refused by this resource server (the AS does not show it to our introspection client)', async () => {
    const client = await register();
    const { tokens } = await codeFlow(client.client_id, { resource: otherResource });
    expect((await introspect(tokens.access_token, rs)).body).toEqual({ active: false });
    expect((await introspect(tokens.access_token, otherRs)).body.active).toBe(true);
    expect((await callEndpoint(endpoint.resource, tokens.access_token)).status).toBe(401);
  });
});
