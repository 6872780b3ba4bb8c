import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLoopbackCertificate, type LoopbackCertificate } from '@mcp-auth-kit/testing';
import { ERR, McpAuthClient, createAuthFetch } from '@mcp-auth-kit/client';
import { assertEgressAllowed } from '@mcp-auth-kit/client/core';
import { egressPolicyForPeer } from '@mcp-auth-kit/protocol';
import type { Logger } from '@mcp-auth-kit/authorization-server';
import {
  NATIVE_REDIRECT,
  authorizationUrl,
  expectOAuthError,
  frontChannel,
  listenCounting,
  loopbackResolvingHostname,
  pkcePair,
  postForm,
  postJson,
  startAttackStack,
  type AttackStack,
  type CountingListener,
} from './helpers/support.js';

/**
 * One egress policy for every URL the AS or the client library fetches (issue 19 finding 5;
 * MCP security best practices §SSRF, RFC 9728 §7.7, draft-ietf-oauth-client-id-metadata-document
 * §SSRF). Every target here is one of this file's loopback listeners; the other address classes
 * are only classified (pure functions at the end), never connected to.
 */

const DCR_BASE = {
  client_name: 'egress attack',
  redirect_uris: [NATIVE_REDIRECT],
  grant_types: ['authorization_code'],
  response_types: ['code'],
  token_endpoint_auth_method: 'none',
};

async function until(condition: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!condition() && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
}

describe("attack: sector_identifier_uri makes the AS fetch a URL of the client's choosing (pairwise is not supported: refused)", () => {
  let off: AttackStack;
  let on: AttackStack;
  let target: CountingListener;
  let cert: LoopbackCertificate;
  let docHost: HttpsServer;
  let docOrigin: string;
  const docHits = new Map<string, number>();

  beforeAll(async () => {
    target = (await listenCounting())!;
    cert = await createLoopbackCertificate();
    docHost = createHttpsServer({ cert: cert.cert, key: cert.key }, (req, res) => {
      const path = new URL(req.url ?? '/', 'https://x').pathname;
      docHits.set(path, (docHits.get(path) ?? 0) + 1);
      const clientId = `${docOrigin}${path}`;
      const extra = path === '/sector.json' ? { sector_identifier_uri: `https://127.0.0.1:${target.port}/sector.json` } : {};
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ client_id: clientId, ...DCR_BASE, ...extra }));
    });
    await new Promise<void>((r) => docHost.listen(0, '127.0.0.1', r));
    docOrigin = `https://127.0.0.1:${(docHost.address() as AddressInfo).port}`;
    off = await startAttackStack();
    on = await startAttackStack({
      cimdAllowPrivateNetwork: true,
      authorizationServer: { cimd: { allowPrivateNetwork: true, extraCaCertificates: cert.cert } },
    });
  });
  afterAll(async () => {
    target?.close();
    docHost?.closeAllConnections();
    docHost?.close();
    await off?.close();
    await on?.close();
  });

  for (const [switchName, stack] of [
    ['OFF', () => off],
    ['ON (dev, loopback issuer)', () => on],
  ] as const) {
    for (const host of ['127.0.0.1', 'localhost']) {
      it(`DCR (RFC 7591) with sector_identifier_uri on ${host}, dev switch ${switchName} → 400 invalid_client_metadata, the listener sees NO connection`, async () => {
        const before = target.sockets.length;
        const res = await postJson(stack().metadata.registration_endpoint, {
          ...DCR_BASE,
          sector_identifier_uri: `https://${host}:${target.port}/sector.json`,
        });
        expect(target.sockets.length - before, 'the AS connected to the sector_identifier_uri target').toBe(0);
        expectOAuthError(res, 'invalid_client_metadata');
        // Refused for the field itself: nothing about the target (status, reachability) travels back.
        expect(String(res.body.error_description)).toMatch(/sector_identifier_uri is not supported/);
        expect(res.text).not.toMatch(/response status|could not load|ECONNRE/);
      });
    }

    it(`RFC 7592 update adding sector_identifier_uri, dev switch ${switchName} → 400 invalid_client_metadata, NO connection`, async () => {
      const created = await postJson(stack().metadata.registration_endpoint, DCR_BASE);
      expect(created.status).toBe(201);
      const { client_id, registration_client_uri, registration_access_token } = created.body as Record<string, string>;
      const before = target.sockets.length;
      const res = await fetch(registration_client_uri!, {
        method: 'PUT',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${registration_access_token}` },
        body: JSON.stringify({ ...DCR_BASE, client_id, sector_identifier_uri: `https://127.0.0.1:${target.port}/sector.json` }),
      });
      expect(target.sockets.length - before, 'the AS connected to the sector_identifier_uri target').toBe(0);
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: string }).error).toBe('invalid_client_metadata');
    });
  }

  it('CIMD document naming a sector_identifier_uri → refused (no code), the document was fetched once and there is NO second fetch', async () => {
    const before = target.sockets.length;
    const { challenge } = pkcePair();
    const result = await frontChannel(on.issuer, authorizationUrl(on, { clientId: `${docOrigin}/sector.json`, challenge }));
    expect(result.kind).toBe('stopped');
    expect((result as { status: number }).status).toBe(400);
    expect(docHits.get('/sector.json')).toBeGreaterThanOrEqual(1);
    expect(target.sockets.length - before, 'the AS fetched the sector_identifier_uri named in the document').toBe(0);
  });

  it('baseline: the same CIMD document without the field is accepted (the refusal is about the field, not the host)', async () => {
    const { challenge } = pkcePair();
    const result = await frontChannel(on.issuer, authorizationUrl(on, { clientId: `${docOrigin}/plain.json`, challenge }));
    expect(result.kind).toBe('callback');
  });
});

describe('attack: jwks_uri of an untrusted (DCR) client — kept for private_key_jwt, fetched only through the egress policy', () => {
  let stack: AttackStack;
  let target: CountingListener;
  let loopbackName: string | undefined;

  beforeAll(async () => {
    target = (await listenCounting())!;
    loopbackName = await loopbackResolvingHostname();
    stack = await startAttackStack();
  });
  afterAll(async () => {
    target?.close();
    await stack?.close();
  });

  async function authenticateWithKeyFrom(jwksUri: string) {
    const registered = await postJson(stack.metadata.registration_endpoint, {
      ...DCR_BASE,
      token_endpoint_auth_method: 'private_key_jwt',
      jwks_uri: jwksUri,
    });
    expect(registered.status, registered.text).toBe(201);
    const clientId = registered.body.client_id as string;
    const { privateKey } = await generateKeyPair('ES256');
    // RFC 7523 §3 client assertion: verifying it makes the AS load the client's jwks_uri.
    const assertion = await new SignJWT({})
      .setProtectedHeader({ alg: 'ES256' })
      .setIssuer(clientId)
      .setSubject(clientId)
      .setAudience(stack.metadata.token_endpoint)
      .setJti(crypto.randomUUID())
      .setIssuedAt()
      .setExpirationTime('1m')
      .sign(privateKey);
    return postForm(stack.metadata.token_endpoint, {
      grant_type: 'refresh_token',
      refresh_token: 'irrelevant',
      client_id: clientId,
      client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
      client_assertion: assertion,
    });
  }

  it('jwks_uri on an IP literal (127.0.0.1) → client authentication fails (401 invalid_client), the listener sees NO connection', async () => {
    const before = target.sockets.length;
    const res = await authenticateWithKeyFrom(`https://127.0.0.1:${target.port}/jwks.json`);
    expect(target.sockets.length - before, 'the AS connected to the jwks_uri target').toBe(0);
    expectOAuthError(res, 'invalid_client', 401);
  });

  it('jwks_uri on a NAME that resolves to loopback (/etc/hosts) → refused on the resolved address, NO connection', async (ctx) => {
    if (!loopbackName) ctx.skip();
    const before = target.sockets.length;
    const res = await authenticateWithKeyFrom(`https://${loopbackName}:${target.port}/jwks.json`);
    expect(target.sockets.length - before, 'the AS connected to the jwks_uri target').toBe(0);
    expect(res.status).toBe(401);
  });
});

describe('request_uri: the AS never fetches a request object by reference', () => {
  let stack: AttackStack;
  let target: CountingListener;

  beforeAll(async () => {
    target = (await listenCounting())!;
    stack = await startAttackStack();
  });
  afterAll(async () => {
    target?.close();
    await stack?.close();
  });

  it('authorization request with request_uri=https://127.0.0.1/… → refused (request_uri_not_supported), NO connection', async () => {
    const created = await postJson(stack.metadata.registration_endpoint, DCR_BASE);
    const { challenge } = pkcePair();
    const url = authorizationUrl(stack, {
      clientId: created.body.client_id as string,
      challenge,
      extra: { request_uri: `https://127.0.0.1:${target.port}/request.jwt` },
    });
    const result = await frontChannel(stack.issuer, url);
    const error = result.kind === 'callback' ? result.url.searchParams.get('error') : result.body;
    expect(error).toMatch(/request_uri_not_supported/);
    expect(target.sockets).toHaveLength(0);
  });
});

describe('attack: an upstream identity provider named by a host that resolves to loopback', () => {
  let target: CountingListener;
  let stack: AttackStack | undefined;
  let loopbackName: string | undefined;
  const warnings: Array<{ message: string; fields?: Record<string, unknown> }> = [];
  const logger: Logger = {
    info: () => {},
    error: () => {},
    warn: (message, fields) => void warnings.push({ message, ...(fields && { fields }) }),
  };

  beforeAll(async () => {
    target = (await listenCounting())!;
    loopbackName = await loopbackResolvingHostname();
    if (!loopbackName) return;
    // The AS discovers its upstream providers at start-up (openid-client, through the egress fetch).
    stack = await startAttackStack({
      quiet: false,
      logger,
      authorizationServer: {
        upstream: [{ name: 'Rebound IdP', issuer: `https://${loopbackName}:${target.port}`, clientId: 'mcp-auth-kit' }],
      },
    });
  });
  afterAll(async () => {
    target?.close();
    await stack?.close();
  });

  it('upstream discovery is refused on the resolved (loopback) address before connecting: the listener sees NO connection', async (ctx) => {
    if (!loopbackName) ctx.skip();
    const refused = () => warnings.some((w) => w.message.includes('egress policy') && w.fields?.purpose === 'upstream:Rebound IdP');
    await until(() => refused() || target.sockets.length > 0);
    expect(target.sockets, 'the AS connected to the upstream host').toHaveLength(0);
    expect(refused()).toBe(true);
  });
});

describe('attack: a remote MCP server steering our client (default options) to loopback targets', () => {
  let target: CountingListener;
  let evil: HttpServer;
  let evilPort: number;
  let loopbackName: string | undefined;
  let pointer = '';

  beforeAll(async () => {
    target = (await listenCounting())!;
    loopbackName = await loopbackResolvingHostname();
    evil = createHttpServer((_req, res) => {
      res.writeHead(401, { 'www-authenticate': `Bearer resource_metadata="${pointer}"`, 'content-type': 'application/json' }).end('{}');
    });
    await new Promise<void>((r) => evil.listen(0, '127.0.0.1', r));
    evilPort = (evil.address() as AddressInfo).port;
  });
  afterAll(() => {
    target?.close();
    evil?.closeAllConnections();
    evil?.close();
  });

  // The MCP server is reached under a NAME that is not loopback by its text (it resolves to
  // loopback here only because the test has no other network): to the client it is remote.
  for (const spelling of ['127.0.0.1', 'localhost', '[::1]', '[::ffff:127.0.0.1]', '2130706433']) {
    it(`resource_metadata on ${spelling} from a non-loopback server → URL_FORBIDDEN before any connection (no option needed)`, async (ctx) => {
      if (!loopbackName) ctx.skip();
      pointer = `http://${spelling}:${target.port}/.well-known/oauth-protected-resource/mcp`;
      const before = target.sockets.length;
      const auth = new McpAuthClient({ clientName: 'ssrf victim', allowInsecureRequests: true, openAuthorizationUrl: async () => {} });
      const error = await createAuthFetch(auth)(`http://${loopbackName}:${evilPort}/mcp`, { method: 'POST', body: '{}' }).then(
        () => undefined,
        (e: { code?: string }) => e,
      );
      expect(target.sockets.length - before, `the client connected to ${spelling}`).toBe(0);
      expect(error?.code).toBe(ERR.URL_FORBIDDEN);
    });
  }

  it('baseline: the same pointer from a loopback MCP server (local development) is followed by default', async () => {
    pointer = `http://127.0.0.1:${target.port}/.well-known/oauth-protected-resource/mcp`;
    const before = target.sockets.length;
    const auth = new McpAuthClient({ clientName: 'local dev', openAuthorizationUrl: async () => {} });
    await createAuthFetch(auth)(`http://127.0.0.1:${evilPort}/mcp`, { method: 'POST', body: '{}' }).catch(() => undefined);
    expect(target.sockets.length - before).toBeGreaterThan(0);
  });

  it("privateNetworks: 'block' refuses loopback targets even for a loopback MCP server", async () => {
    pointer = `http://127.0.0.1:${target.port}/.well-known/oauth-protected-resource/mcp`;
    const before = target.sockets.length;
    const auth = new McpAuthClient({ clientName: 'server-side', privateNetworks: 'block', openAuthorizationUrl: async () => {} });
    const error = await createAuthFetch(auth)(`http://127.0.0.1:${evilPort}/mcp`, { method: 'POST', body: '{}' }).then(
      () => undefined,
      (e: { code?: string }) => e,
    );
    expect(target.sockets.length - before, 'the client connected to the loopback target').toBe(0);
    expect(error?.code).toBe(ERR.URL_FORBIDDEN);
  });
});

describe('the client egress decision for every other address class (pure: literals never resolve nor connect)', () => {
  const remote = egressPolicyForPeer('https://mcp.example/mcp');
  const local = egressPolicyForPeer('http://localhost:3000/mcp');
  it.each([
    ['http://169.254.169.254/latest/meta-data/', 'cloud metadata (link-local)'],
    ['http://[fd00:ec2::254]/', 'cloud metadata (IPv6 ULA)'],
    ['https://10.0.0.1/.well-known/oauth-protected-resource', 'private 10/8'],
    ['https://192.168.1.1/', 'private 192.168/16'],
    ['https://172.16.0.1/', 'private 172.16/12'],
    ['https://100.64.0.1/', 'CGNAT'],
    ['https://[fe80::1]/', 'IPv6 link-local'],
    ['https://[::ffff:a9fe:a9fe]/', 'IPv4-mapped link-local'],
    ['https://0.0.0.0/', 'this network'],
  ])('%s (%s): refused for a remote AND for a loopback MCP server', async (url) => {
    for (const policy of [remote, local]) {
      await expect(
        assertEgressAllowed(new URL(url), policy, 'u', async () => expect.unreachable('no DNS for literals')),
      ).rejects.toMatchObject({ code: ERR.URL_FORBIDDEN });
    }
  });
});
