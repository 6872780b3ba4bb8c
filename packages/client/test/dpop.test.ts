import { afterEach, describe, expect, it } from 'vitest';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { McpAuthClient, MemoryStore, type AuthStore, type McpAuthClientOptions } from '../src/index.js';
import { headlessBrowser, startOidcProvider, startResourceServer, type TestAs, type TestRs } from './_harness.js';

const cleanups: { close(): Promise<void> }[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!.close();
});

async function stack(dpop?: { nonce?: string }): Promise<[TestAs, TestRs]> {
  let as: TestAs | undefined;
  const rs = await startResourceServer(() => as!.issuer, { basicScope: 'notes:read', writeScope: 'notes:write', ...(dpop && { dpop }) });
  as = await startOidcProvider({ [rs.mcpUrl]: ['notes:read', 'notes:write'] });
  cleanups.push(rs, as);
  return [as, rs];
}
const client = (o: Partial<McpAuthClientOptions> = {}) =>
  new McpAuthClient({ clientName: 'dpop test', store: new MemoryStore(), openAuthorizationUrl: headlessBrowser, ...o });
const body = { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' };

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
    const keyless: AuthStore = Object.assign(Object.create(store) as AuthStore, { getDpopKey: undefined, setDpopKey: undefined, deleteDpopKey: undefined });
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
});
