import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignJWT, generateKeyPair, type JWK } from 'jose';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { callWhoami, fullFlow, registerClient, startAttackStack, type AttackStack } from '../security/helpers/support.js';
import { listenProtectedEndpoint, post } from './helpers/resource-server.js';

/**
 * JWKS endpoint down (RFC 9068 §4 — keys come from the AS's jwks_uri; RFC 8725 §3.10): the
 * resource server keeps validating with the keys it already fetched, and a token whose `kid`
 * is unknown is refused (it cannot be validated), never accepted and never a 5xx.
 */
describe('fault: the authorization server (and its JWKS) goes down', () => {
  let stack: AttackStack;
  let clientId: string;
  let asStopped = false;

  beforeAll(async () => {
    stack = await startAttackStack();
    clientId = await registerClient(stack);
  });
  afterAll(async () => {
    await stack?.mcp.close();
    if (!asStopped) await stack?.as.close();
  });

  it('tokens not seen before still validate from the cached JWKS; unknown kid → 401 invalid_token', async () => {
    const first = await fullFlow(stack, clientId);
    const unseen = await fullFlow(stack, clientId);
    const [current] = await stack.as.server.store.keys.signingKeys();
    const alg = String((current!.jwk as JWK).alg);
    const foreign = await generateKeyPair(alg);
    const now = Math.floor(Date.now() / 1000);
    const unknownKid = await new SignJWT({
      iss: stack.issuer,
      aud: stack.mcpUrl,
      sub: 'x',
      client_id: 'x',
      scope: 'notes:read',
      jti: 'j',
      iat: now,
      exp: now + 300,
    })
      .setProtectedHeader({ alg, kid: 'rotated-in-later', typ: 'at+jwt' })
      .sign(foreign.privateKey);

    // Warm the resource server's JWKS cache with one token.
    expect((await callWhoami(stack.mcpUrl, first.access_token)).status).toBe(200);

    await stack.as.close();
    asStopped = true;
    const jwks = await fetch(stack.metadata.jwks_uri).then(
      () => 'up',
      () => 'down',
    );
    expect(jwks).toBe('down');

    // A token the RS never saw (so not in its validated-token cache) validates with cached keys.
    const res = await callWhoami(stack.mcpUrl, unseen.access_token);
    expect(res.status).toBe(200);
    await res.arrayBuffer();

    // An unknown kid forces a JWKS refetch, which fails: refused, not accepted, not 5xx.
    const refused = await callWhoami(stack.mcpUrl, unknownKid);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toContain('error="invalid_token"');
    await refused.arrayBuffer();

    // Repeated unknown kids do not stall the server (refetch cooldown) and valid tokens keep working.
    const burst = await Promise.all(Array.from({ length: 20 }, () => callWhoami(stack.mcpUrl, unknownKid)));
    for (const r of burst) {
      expect(r.status).toBe(401);
      await r.arrayBuffer();
    }
    const still = await callWhoami(stack.mcpUrl, first.access_token);
    expect(still.status).toBe(200);
    await still.arrayBuffer();
  });

  it('a flood of unknown kids does not turn the resource server into a JWKS-fetching amplifier (refetch cooldown)', async () => {
    const fresh = await startAttackStack();
    const endpoint = await listenProtectedEndpoint();
    let fetches = 0;
    // A counting relay in front of the AS's JWKS (loopback), given to the RS as its jwks_uri.
    const relay: Server = createServer(async (_req, res) => {
      fetches++;
      const upstream = await fetch(fresh.metadata.jwks_uri);
      res.writeHead(upstream.status, { 'content-type': 'application/json' }).end(await upstream.text());
    });
    await new Promise<void>((r) => relay.listen(0, '127.0.0.1', r));
    try {
      endpoint.protect(fresh.issuer, {
        jwks: { uris: { [fresh.issuer]: `http://127.0.0.1:${(relay.address() as AddressInfo).port}/jwks` } },
      });
      const [current] = await fresh.as.server.store.keys.signingKeys();
      const alg = String((current!.jwk as JWK).alg);
      const foreign = await generateKeyPair(alg);
      const now = Math.floor(Date.now() / 1000);
      const forged = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          new SignJWT({
            iss: fresh.issuer,
            aud: endpoint.resource,
            sub: 'x',
            client_id: 'x',
            scope: 'notes:read',
            jti: `j${i}`,
            iat: now,
            exp: now + 300,
          })
            .setProtectedHeader({ alg, kid: `unknown-${i}`, typ: 'at+jwt' })
            .sign(foreign.privateKey),
        ),
      );
      for (const token of forged) expect((await post(endpoint.resource, token)).status).toBe(401);
      expect(fetches).toBeGreaterThan(0);
      expect(fetches).toBeLessThanOrEqual(3);
    } finally {
      relay.closeAllConnections();
      relay.close();
      await endpoint.close();
      await fresh.close();
    }
  });
});
