import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLoopbackCertificate, type LoopbackCertificate } from '@mcp-auth-kit/testing';
import { authorizationUrl, frontChannel, pkcePair, postForm, postJson, useAttackStack, type AttackStack } from './helpers/support.js';

/**
 * A fetched document is used only for the purpose it was fetched for (issue 40 item 2).
 *
 * MCP 2026-07-28 client registration §Client ID Metadata Documents: the authorization server
 * fetches the document at the `client_id` URL, MUST validate that its `client_id` matches the URL
 * exactly, SHOULD cache it, and SHOULD follow draft-ietf-oauth-client-id-metadata-document-00 §6
 * (security considerations); the draft's client information discovery does not follow redirects.
 * A client's `jwks_uri` (RFC 7591 §2) is another fetch for another purpose: its answer must never
 * become some URL's client metadata, whatever `client_id` the JSON it returns claims.
 *
 * Two loopback "hosts" under the dev switch: the victim on 127.0.0.1 (the only host
 * `cimd.allowedHosts` allows) with an open redirect, the attacker on `localhost`.
 */

type Route = (res: ServerResponse, url: URL) => void;

interface Host {
  server: HttpsServer;
  origin: string;
  routes: Record<string, Route>;
  hits: Map<string, number>;
}

async function startHost(cert: LoopbackCertificate, name: '127.0.0.1' | 'localhost'): Promise<Host> {
  const routes: Record<string, Route> = {};
  const hits = new Map<string, number>();
  const server = createHttpsServer({ cert: cert.cert, key: cert.key }, (req, res) => {
    const url = new URL(req.url ?? '/', 'https://x');
    hits.set(url.pathname, (hits.get(url.pathname) ?? 0) + 1);
    const route = routes[url.pathname];
    if (!route) return void res.writeHead(404).end();
    route(res, url);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, origin: `https://${name}:${(server.address() as AddressInfo).port}`, routes, hits };
}

const ATTACKER_REDIRECT = 'http://127.0.0.1/attacker-callback';

function json(res: ServerResponse, body: unknown): void {
  res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=3600' }).end(JSON.stringify(body));
}

/** DCR of a private_key_jwt client naming `jwksUri`, then ONE token request authenticated by an assertion (RFC 7523 §2.2). */
async function registerAndAuthenticateOnce(
  stack: AttackStack,
  jwksUri: string,
  serveKey?: (jwks: { keys: unknown[] }) => void,
): Promise<Record<string, unknown>> {
  const reg = await postJson(stack.metadata.registration_endpoint, {
    client_name: 'attacker',
    redirect_uris: [ATTACKER_REDIRECT],
    grant_types: ['authorization_code'],
    response_types: ['code'],
    token_endpoint_auth_method: 'private_key_jwt',
    token_endpoint_auth_signing_alg: 'ES256',
    jwks_uri: jwksUri,
  });
  expect(reg.status, reg.text).toBe(201);
  const clientId = reg.body.client_id as string;
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  serveKey?.({ keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' }] });
  const assertion = await new SignJWT({})
    .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
    .setIssuer(clientId)
    .setSubject(clientId)
    .setAudience(stack.metadata.token_endpoint)
    .setJti(randomBytes(12).toString('hex'))
    .setIssuedAt()
    .setExpirationTime('1m')
    .sign(privateKey);
  const token = await postForm(stack.metadata.token_endpoint, {
    grant_type: 'authorization_code',
    code: 'not-a-code',
    redirect_uri: ATTACKER_REDIRECT,
    client_id: clientId,
    client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
    client_assertion: assertion,
  });
  // The code is made up: the request fails either way, after (or at) client authentication.
  expect(token.status).toBeGreaterThanOrEqual(400);
  return token.body;
}

function authorizeAt(stack: AttackStack, clientId: string) {
  return frontChannel(stack.issuer, authorizationUrl(stack, { clientId, redirectUri: ATTACKER_REDIRECT, challenge: pkcePair().challenge }));
}

describe('attack: CIMD cache poisoning through a client jwks_uri', () => {
  let cert: LoopbackCertificate;
  let victim: Host;
  let attacker: Host;

  beforeAll(async () => {
    cert = await createLoopbackCertificate();
    victim = await startHost(cert, '127.0.0.1');
    attacker = await startHost(cert, 'localhost');
    // The victim's open redirect: any `to` (a common bug on real hosts, e.g. a login "next").
    victim.routes['/go'] = (res, url) => res.writeHead(302, { location: url.searchParams.get('to') ?? '/' }).end();
  });
  afterAll(async () => {
    for (const host of [victim, attacker]) {
      host?.server.closeAllConnections();
      host?.server.close();
    }
  });
  const stack = useAttackStack(() => ({
    cimdAllowPrivateNetwork: true,
    authorizationServer: {
      cimd: { allowPrivateNetwork: true, extraCaCertificates: cert.cert, allowedHosts: ['127.0.0.1'] },
    },
  }));

  it('baseline: the attacker document on its own host is no CIMD client here (cimd.allowedHosts)', async () => {
    attacker.routes['/own.json'] = (res, url) =>
      json(res, {
        client_id: `${attacker.origin}${url.pathname}`,
        client_name: 'Victim Corp',
        redirect_uris: [ATTACKER_REDIRECT],
        token_endpoint_auth_method: 'none',
      });
    const result = await authorizeAt(stack, `${attacker.origin}/own.json`);
    expect(result.kind).toBe('stopped');
    expect(attacker.hits.get('/own.json') ?? 0).toBe(0);
  });

  it('jwks_uri behind the victim host’s open redirect: one token request, then /auth?client_id=<victim URL> must not use the attacker’s document', async () => {
    const target = `${attacker.origin}/doc.json`;
    const victimUrl = `${victim.origin}/go?to=${encodeURIComponent(target)}`;
    attacker.routes['/doc.json'] = (res) =>
      json(res, {
        client_id: victimUrl,
        client_name: 'Victim Corp',
        redirect_uris: [ATTACKER_REDIRECT],
        token_endpoint_auth_method: 'none',
      });

    // The JSON at jwks_uri is no JWKS: the client does not authenticate.
    expect((await registerAndAuthenticateOnce(stack, victimUrl)).error).toBe('invalid_client');
    // The jwks_uri fetch did follow the redirect to the attacker (redirects are allowed for JWKS).
    expect(attacker.hits.get('/doc.json')).toBe(1);

    const result = await authorizeAt(stack, victimUrl);
    if (result.kind === 'callback') {
      expect.fail(
        `the code went to ${result.url.origin}${result.url.pathname}: the attacker's document was used as ${victimUrl}'s metadata`,
      );
    }
    expect(result.body).not.toContain('Victim Corp');
    // The CIMD fetch of the victim URL does not follow its 302 (the draft's discovery rule): invalid_client.
    expect(result.status).toBe(400);
    expect(victim.hits.get('/go')).toBeGreaterThanOrEqual(2);
    expect(attacker.hits.get('/doc.json')).toBe(1);
  });

  it('jwks_uri pointing straight at a JSON whose client_id is that URL: the answer is no CIMD, the document is fetched as one when it is used', async () => {
    const url = `${victim.origin}/published.json`;
    let withdrawn = false;
    victim.routes['/published.json'] = (res) => {
      if (withdrawn) return void res.writeHead(404, { 'content-type': 'application/json' }).end('{}');
      json(res, { client_id: url, client_name: 'Victim Corp', redirect_uris: [ATTACKER_REDIRECT], token_endpoint_auth_method: 'none' });
    };

    await registerAndAuthenticateOnce(stack, url);
    expect(victim.hits.get('/published.json')).toBe(1);
    // The host no longer publishes a document there; only a CIMD fetch may tell the AS otherwise.
    withdrawn = true;

    const result = await authorizeAt(stack, url);
    if (result.kind === 'callback') {
      expect.fail(`the code went to ${result.url.origin}${result.url.pathname}: the jwks_uri answer was used as client metadata`);
    }
    expect(result.status).toBe(400);
    expect(result.body).not.toContain('Victim Corp');
    expect(victim.hits.get('/published.json')).toBeGreaterThanOrEqual(2);
  });

  it('control: a real JWKS behind the same open redirect still authenticates the client (the jwks_uri fetcher works, redirects and all)', async () => {
    let jwks: unknown;
    attacker.routes['/jwks.json'] = (res) => json(res, jwks);
    const jwksUri = `${victim.origin}/go?to=${encodeURIComponent(`${attacker.origin}/jwks.json`)}`;
    const body = await registerAndAuthenticateOnce(stack, jwksUri, (keys) => {
      jwks = keys;
    });
    // Past client authentication: the made-up code is what fails (RFC 6749 §5.2).
    expect(body.error).toBe('invalid_grant');
    expect(attacker.hits.get('/jwks.json')).toBe(1);
  });

  it('control: the same URL used as a client_id is fetched as a CIMD document, cached, and the flow reaches the callback', async () => {
    const url = `${victim.origin}/real.json`;
    victim.routes['/real.json'] = (res) =>
      json(res, { client_id: url, client_name: 'Real client', redirect_uris: [ATTACKER_REDIRECT], token_endpoint_auth_method: 'none' });
    expect((await authorizeAt(stack, url)).kind).toBe('callback');
    expect((await authorizeAt(stack, url)).kind).toBe('callback');
    expect(victim.hits.get('/real.json')).toBe(1);
  });
});
