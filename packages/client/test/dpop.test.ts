import { afterEach, describe, expect, it } from 'vitest';
import { calculateJwkThumbprint, decodeJwt, decodeProtectedHeader, type JWK } from 'jose';
import { ERR, McpAuthClient, McpAuthError, MemoryStore, type AuthStore, type McpAuthClientOptions } from '../src/index.js';
import { headlessBrowser, startNotesPair, startOidcProvider, startResourceServer, type TestAs, type TestRs } from './helpers/harness.js';

const cleanups: { close(): Promise<void> }[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!.close();
});

async function stack(dpop?: { nonce?: string }, asOpts: { dpopNonce?: boolean } = {}): Promise<[TestAs, TestRs]> {
  const [as, rs] = await startNotesPair(
    (issuerOf) => startResourceServer(issuerOf, { basicScope: 'notes:read', writeScope: 'notes:write', ...(dpop && { dpop }) }),
    asOpts,
  );
  cleanups.push(rs, as);
  return [as, rs];
}
const client = (o: Partial<McpAuthClientOptions> = {}) =>
  new McpAuthClient({ clientName: 'dpop test', store: new MemoryStore(), openAuthorizationUrl: headlessBrowser, ...o });
/** RFC 7638 thumbprint of the key in a DPoP proof's header (= the `jkt` it proves possession of). */
const proofJkt = (proof: string) => calculateJwkThumbprint(decodeProtectedHeader(proof).jwk as JWK);
/** The resource server saw two DPoP-authorized requests, both proved with the key `jkt`. */
async function expectTwoProofsWithKey(rs: { requests: Array<{ authorization?: string; dpop?: string }> }, jkt: string) {
  const proofs = rs.requests.filter((r) => r.authorization?.startsWith('DPoP ')).map((r) => r.dpop!);
  expect(proofs).toHaveLength(2);
  for (const p of proofs) expect(await proofJkt(p)).toBe(jkt);
}
const body = { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' };

/**
 * One client calls two (issuer, resource) pairs in turn, twice each; returns it with each pair's
 * tokens, after checking both are DPoP-bound to different keys (RFC 9449 §10 / SEP-1932).
 */
async function callBothPairs(store: AuthStore, first: [issuer: string, rs: TestRs], second: [issuer: string, rs: TestRs]) {
  const c = client({ store });
  for (const [, rs] of [first, second, first, second]) expect((await c.fetch(rs.mcpUrl, body)).status).toBe(200);
  const t1 = (await store.getTokens(first[0], first[1].mcpUrl))!;
  const t2 = (await store.getTokens(second[0], second[1].mcpUrl))!;
  expect(t1.dpop_jkt).toBeTruthy();
  expect(t2.dpop_jkt).toBeTruthy();
  expect(t1.dpop_jkt).not.toBe(t2.dpop_jkt);
  return { c, t1, t2 };
}

describe('RFC 9449 DPoP (extension SEP-1932)', () => {
  it('AS and PRM announce DPoP: token bound to the key, DPoP scheme, fresh proof with ath per request', async () => {
    const [as, rs] = await stack({});
    const store = new MemoryStore();
    const c = client({ store });
    expect((await c.fetch(rs.mcpUrl, body)).status).toBe(200);
    expect((await c.fetch(rs.mcpUrl, body)).status).toBe(200);
    const tokens = (await store.getTokens(as.issuer, rs.mcpUrl))!;
    expect(tokens.token_type.toLowerCase()).toBe('dpop');
    expect((decodeJwt(tokens.access_token).cnf as { jkt: string }).jkt).toBe(tokens.dpop_jkt);
    const used = rs.requests.filter((r) => r.authorization?.startsWith('DPoP '));
    expect(used).toHaveLength(2);
    const [p1, p2] = used.map((r) => decodeJwt(r.dpop!));
    expect(p1!.jti).not.toBe(p2!.jti);
    expect(p1).toMatchObject({ htm: 'POST', htu: rs.mcpUrl });
    expect(decodeProtectedHeader(used[0]!.dpop!).typ).toBe('dpop+jwt');
    // RFC 9449 §10: the authorization code was bound to the same key.
    expect(as.authorizationRequests.at(-1)!.get('dpop_jkt')).toBe(tokens.dpop_jkt);
  });

  it('refresh of a DPoP-bound grant carries a proof and keeps the binding', async () => {
    const [as, rs] = await stack({});
    const store = new MemoryStore();
    const c = client({ store });
    expect((await c.fetch(rs.mcpUrl, body)).status).toBe(200);
    const t = (await store.getTokens(as.issuer, rs.mcpUrl))!;
    await store.setTokens({ ...t, expires_at: 0 });
    expect((await c.fetch(rs.mcpUrl, body)).status).toBe(200);
    const after = (await store.getTokens(as.issuer, rs.mcpUrl))!;
    expect(after.access_token).not.toBe(t.access_token);
    expect(after.dpop_jkt).toBe(t.dpop_jkt);
    expect(as.tokenRequests.at(-1)!.get('grant_type')).toBe('refresh_token');
  });

  it('RFC 9449 §9: a resource server use_dpop_nonce challenge is answered by one retry with the nonce', async () => {
    const [, rs] = await stack({ nonce: 'server-nonce-1' });
    const c = client();
    expect((await c.fetch(rs.mcpUrl, body)).status).toBe(200);
    const withNonce = rs.requests.filter((r) => r.dpop && decodeJwt(r.dpop).nonce === 'server-nonce-1');
    expect(withNonce.length).toBeGreaterThanOrEqual(1);
  });

  it("'auto': an AS offering DPoP is not enough; without the PRM announcing it, tokens stay Bearer", async () => {
    const [as, rs] = await stack();
    const store = new MemoryStore();
    expect((await client({ store }).fetch(rs.mcpUrl, body)).status).toBe(200);
    expect((await store.getTokens(as.issuer, rs.mcpUrl))!.token_type.toLowerCase()).toBe('bearer');
    expect(rs.requests.at(-1)!.authorization).toMatch(/^Bearer /);
    expect(as.authorizationRequests.at(-1)!.get('dpop_jkt')).toBeNull();
  });

  it("'never': Bearer even when both sides announce DPoP", async () => {
    const [as, rs] = await stack({});
    const store = new MemoryStore();
    expect((await client({ store, dpop: 'never' }).fetch(rs.mcpUrl, body)).status).toBe(200);
    expect((await store.getTokens(as.issuer, rs.mcpUrl))!.token_type.toLowerCase()).toBe('bearer');
  });

  it('DPoP-bound tokens are unusable without their key: with a store that keeps no keys, a new client instance re-authorizes instead of sending them', async () => {
    const [as, rs] = await stack({});
    // a host store without the optional DPoP key methods: keys live in each client's memory
    const store = new MemoryStore();
    const keyless: AuthStore = Object.assign(Object.create(store) as AuthStore, {
      getDpopKey: undefined,
      setDpopKey: undefined,
      deleteDpopKey: undefined,
    });
    expect((await client({ store: keyless }).fetch(rs.mcpUrl, body)).status).toBe(200);
    const old = (await keyless.getTokens(as.issuer, rs.mcpUrl))!;
    const n = as.authorizationRequests.length;
    const seen = rs.requests.length;
    expect((await client({ store: keyless }).fetch(rs.mcpUrl, body)).status).toBe(200);
    expect(as.authorizationRequests.length).toBe(n + 1);
    const later = rs.requests.slice(seen);
    expect(later.length).toBeGreaterThan(0);
    for (const r of later) expect(r.authorization ?? '').not.toContain(old.access_token);
    expect((await keyless.getTokens(as.issuer, rs.mcpUrl))!.dpop_jkt).not.toBe(old.dpop_jkt);
  });

  it('a store that keeps DPoP keys (memory, file) lets a new client instance reuse the bound tokens without re-authorizing', async () => {
    const [as, rs] = await stack({});
    const store = new MemoryStore();
    expect((await client({ store }).fetch(rs.mcpUrl, body)).status).toBe(200);
    const tokens = (await store.getTokens(as.issuer, rs.mcpUrl))!;
    const key = (await store.getDpopKey(as.issuer, rs.mcpUrl))!;
    expect(key.jkt).toBe(tokens.dpop_jkt);
    expect(key.private_jwk.d).toBeTypeOf('string');
    const n = as.authorizationRequests.length;
    expect((await client({ store }).fetch(rs.mcpUrl, body)).status).toBe(200);
    expect(as.authorizationRequests.length).toBe(n);
    expect(rs.requests.at(-1)!.authorization).toBe(`DPoP ${tokens.access_token}`);
    // logout forgets the key with the tokens
    await client({ store }).logout(rs.mcpUrl);
    expect(await store.getDpopKey(as.issuer, rs.mcpUrl)).toBeUndefined();
  });

  it('RFC 9449 §10 / SEP-1932: one DPoP key per (issuer, resource): two resources of one AS get different keys, each pair reuses its own', async () => {
    let as: TestAs | undefined;
    const opts = { basicScope: 'notes:read', writeScope: 'notes:write', dpop: {} };
    const rs1 = await startResourceServer(() => as!.issuer, opts);
    const rs2 = await startResourceServer(() => as!.issuer, opts);
    as = await startOidcProvider({ [rs1.mcpUrl]: ['notes:read', 'notes:write'], [rs2.mcpUrl]: ['notes:read', 'notes:write'] });
    cleanups.push(rs1, rs2, as);
    const store = new MemoryStore();
    const { c, t1, t2 } = await callBothPairs(store, [as.issuer, rs1], [as.issuer, rs2]);
    // One registration at the issuer serves both resources; only the keys differ.
    expect(t1.client_id).toBe(t2.client_id);
    expect(as.registrations).toHaveLength(1);
    // Resource server side: every proof to a resource is signed with that resource's key.
    for (const [rs, t] of [
      [rs1, t1],
      [rs2, t2],
    ] as const) {
      await expectTwoProofsWithKey(rs, t.dpop_jkt!);
      expect((decodeJwt(t.access_token).cnf as { jkt: string }).jkt).toBe(t.dpop_jkt);
    }
    // AS side: each code was bound to its resource's key (dpop_jkt) and redeemed with that key.
    expect(as.authorizationRequests.map((q) => [q.get('resource'), q.get('dpop_jkt')])).toEqual([
      [rs1.mcpUrl, t1.dpop_jkt],
      [rs2.mcpUrl, t2.dpop_jkt],
    ]);
    expect(await Promise.all(as.tokenHttp.map((h) => proofJkt(h.dpop!)))).toEqual([t1.dpop_jkt, t2.dpop_jkt]);
    // The same pair keeps its key: a refresh for resource 1 after using resource 2 proves resource 1's key.
    await store.setTokens({ ...t1, expires_at: 0 });
    expect((await c.fetch(rs1.mcpUrl, body)).status).toBe(200);
    expect(as.tokenRequests.at(-1)!.get('grant_type')).toBe('refresh_token');
    expect(await proofJkt(as.tokenHttp.at(-1)!.dpop!)).toBe(t1.dpop_jkt);
    expect((await store.getTokens(as.issuer, rs1.mcpUrl))!.dpop_jkt).toBe(t1.dpop_jkt);
    expect(await proofJkt(rs1.requests.at(-1)!.dpop!)).toBe(t1.dpop_jkt);
    // The stored keys are per pair as well.
    expect((await store.getDpopKey(as.issuer, rs1.mcpUrl))!.jkt).toBe(t1.dpop_jkt);
    expect((await store.getDpopKey(as.issuer, rs2.mcpUrl))!.jkt).toBe(t2.dpop_jkt);
  });

  it('RFC 9449 §10 / SEP-1932: one DPoP key per (issuer, resource): two issuers get different keys, each pair reuses its own', async () => {
    const [as1, rs1] = await stack({});
    const [as2, rs2] = await stack({});
    expect(as1.issuer).not.toBe(as2.issuer);
    const { t1, t2 } = await callBothPairs(new MemoryStore(), [as1.issuer, rs1], [as2.issuer, rs2]);
    for (const [as, rs, t] of [
      [as1, rs1, t1],
      [as2, rs2, t2],
    ] as const) {
      await expectTwoProofsWithKey(rs, t.dpop_jkt!);
      expect(as.authorizationRequests.map((q) => q.get('dpop_jkt'))).toEqual([t.dpop_jkt]);
      expect(await Promise.all(as.tokenHttp.map((h) => proofJkt(h.dpop!)))).toEqual([t.dpop_jkt]);
    }
  });

  it('RFC 9449 §8: the token endpoint answers 400 use_dpop_nonce with a DPoP-Nonce; the client retries once with that nonce in a new proof', async () => {
    const [as, rs] = await stack({}, { dpopNonce: true });
    const store = new MemoryStore();
    const c = client({ store });
    expect((await c.fetch(rs.mcpUrl, body)).status).toBe(200);
    const tokens = (await store.getTokens(as.issuer, rs.mcpUrl))!;
    expect(tokens.token_type.toLowerCase()).toBe('dpop');
    // Exactly two token endpoint requests for the code exchange: refused for the nonce, then accepted.
    expect(as.tokenHttp.map((h) => [h.status, h.error])).toEqual([
      [400, 'use_dpop_nonce'],
      [200, undefined],
    ]);
    const [first, second] = as.tokenHttp;
    const nonce = first!.dpopNonce;
    expect(nonce).toBeTruthy();
    expect(decodeJwt(first!.dpop!).nonce).toBeUndefined();
    const retried = decodeJwt(second!.dpop!);
    expect(retried.nonce).toBe(nonce);
    expect(retried.jti).not.toBe(decodeJwt(first!.dpop!).jti);
    expect(retried).toMatchObject({ htm: 'POST', htu: `${as.issuer}/token` });
    // Same key in both proofs, and the same authorization code redeemed once.
    expect(await proofJkt(second!.dpop!)).toBe(await proofJkt(first!.dpop!));
    expect(await proofJkt(second!.dpop!)).toBe(tokens.dpop_jkt);
    expect(as.tokenRequests.filter((p) => p.get('grant_type') === 'authorization_code')).toHaveLength(2);
    expect(as.authorizationRequests).toHaveLength(1);

    // The nonce is remembered for the AS: a later refresh sends it in its first proof.
    await store.setTokens({ ...tokens, expires_at: 0 });
    const n = as.tokenHttp.length;
    expect((await c.fetch(rs.mcpUrl, body)).status).toBe(200);
    const refresh = as.tokenHttp.slice(n);
    expect(refresh.at(-1)!.status).toBe(200);
    expect(refresh.length).toBeLessThanOrEqual(2);
    expect(decodeJwt(refresh[0]!.dpop!).nonce).toBeTruthy();
  });

  it('RFC 9449 §8: a token endpoint that keeps answering use_dpop_nonce gets exactly one retry, then the grant fails', async () => {
    const [as, rs] = await stack({});
    let tokenCalls = 0;
    const proofs: string[] = [];
    // The AS is healthy for discovery/registration/authorization; its token endpoint always asks for a new nonce.
    const c = client({
      fetch: async (input, init) => {
        const req = new Request(input, init);
        if (req.url === `${as.issuer}/token`) {
          tokenCalls++;
          proofs.push(req.headers.get('dpop') ?? '');
          return new Response(JSON.stringify({ error: 'use_dpop_nonce', error_description: 'nonce required' }), {
            status: 400,
            headers: { 'content-type': 'application/json', 'dpop-nonce': `nonce-${tokenCalls}` },
          });
        }
        return globalThis.fetch(req);
      },
    });
    const err = await c.fetch(rs.mcpUrl, body).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(McpAuthError);
    expect((err as McpAuthError).code).toBe(ERR.TOKEN_REQUEST_FAILED);
    expect((err as McpAuthError).error).toBe('use_dpop_nonce');
    expect(tokenCalls).toBe(2);
    expect(decodeJwt(proofs[0]!).nonce).toBeUndefined();
    expect(decodeJwt(proofs[1]!).nonce).toBe('nonce-1');
  });
});
