/**
 * The authorization server's JWKS or introspection endpoint unreachable from the resource
 * server. The token cannot be checked, so it is never accepted; but it is not invalid either:
 * RFC 6750 §3.1 `invalid_token` (401 with a challenge) tells the client to discard its tokens and
 * sign in again, which during an AS outage fails too and sends every user through the login at
 * once when the AS returns. The answer is 503 with `Retry-After` (RFC 9110 §15.6.4, §10.2.3) and
 * no challenge; once the AS answers again the same token works, without a new sign-in.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fullFlow, registerClient, startAttackStack, type AttackStack } from '../security/helpers/support.js';
import { listenProtectedEndpoint, type ProtectedEndpoint } from './helpers/resource-server.js';

/** A loopback relay to one URL of the AS that a test switches off (connections dropped) and on. */
async function switchableRelay(target: string): Promise<{ url: string; up: boolean; close(): Promise<void> }> {
  const state = { up: true };
  const server: Server = createServer(async (req, res) => {
    if (!state.up) {
      req.socket.destroy();
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const headers: Record<string, string> = {};
    for (const name of ['content-type', 'authorization', 'accept']) {
      const value = req.headers[name];
      if (typeof value === 'string') headers[name] = value;
    }
    const upstream = await fetch(target, {
      method: req.method,
      headers,
      ...(chunks.length > 0 && { body: Buffer.concat(chunks) }),
    });
    res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' });
    res.end(Buffer.from(await upstream.arrayBuffer()));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return Object.assign(state, {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/relay`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  });
}

const call = async (url: string, token: string) => {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: '{}',
  });
  const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  return { status: res.status, challenge: res.headers.get('www-authenticate'), retryAfter: res.headers.get('retry-after'), body };
};

describe('fault: the AS keys or introspection endpoint cannot be reached by the resource server', () => {
  const secret = randomBytes(24).toString('base64url');
  let endpoint: ProtectedEndpoint;
  let stack: AttackStack;
  let clientId: string;
  const relays: Awaited<ReturnType<typeof switchableRelay>>[] = [];

  beforeAll(async () => {
    endpoint = await listenProtectedEndpoint();
    stack = await startAttackStack({
      extraResources: [endpoint.resource],
      authorizationServer: {
        // RFC 7662 §2.1: the resource server introspects as a confidential client named by its resource URI
        clients: [
          {
            client_id: endpoint.resource,
            client_secret: secret,
            token_endpoint_auth_method: 'client_secret_basic',
            grant_types: [],
            response_types: [],
            redirect_uris: [],
          },
        ],
      },
    });
    clientId = await registerClient(stack);
  });
  afterAll(async () => {
    for (const relay of relays) await relay.close();
    await endpoint?.close();
    await stack?.close();
  });

  it('JWKS unreachable (RFC 9068 §4 keys never fetched): 503 + Retry-After, no invalid_token challenge; the same token works once the JWKS answers', async () => {
    const relay = await switchableRelay(stack.metadata.jwks_uri);
    relays.push(relay);
    endpoint.protect(stack.issuer, { cache: false, jwks: { uris: { [stack.issuer]: relay.url } } });
    const { access_token } = await fullFlow(stack, clientId, { resource: endpoint.resource });

    relay.up = false;
    const down = await call(endpoint.resource, access_token);
    expect(down.status).toBe(503);
    expect(down.retryAfter).toMatch(/^[1-9][0-9]*$/);
    expect(down.challenge).toBeNull();
    expect(down.body.error).toBe('temporarily_unavailable');

    relay.up = true;
    const back = await call(endpoint.resource, access_token);
    expect(back.status).toBe(200);
  });

  it('RFC 7662 introspection endpoint unreachable: 503 + Retry-After, no invalid_token challenge; the same token works once the AS answers', async () => {
    const relay = await switchableRelay(stack.metadata.introspection_endpoint!);
    relays.push(relay);
    endpoint.protect(stack.issuer, {
      cache: false,
      introspection: { endpoint: relay.url, clientId: endpoint.resource, clientSecret: secret, introspectJwt: true, timeoutMs: 2000 },
    });
    const { access_token } = await fullFlow(stack, clientId, { resource: endpoint.resource });
    expect((await call(endpoint.resource, access_token)).status).toBe(200);

    relay.up = false;
    const down = await call(endpoint.resource, access_token);
    expect(down.status).toBe(503);
    expect(down.retryAfter).toMatch(/^[1-9][0-9]*$/);
    expect(down.challenge).toBeNull();

    relay.up = true;
    expect((await call(endpoint.resource, access_token)).status).toBe(200);
  });
});
