import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAuthFetch, FileStore, McpAuthClient, MemoryStore, type AuthStore, type McpAuthEvent } from '../src/index.js';
import { headlessBrowser, startNotesPair, type TestAs, type TestRs } from './helpers/harness.js';

let as: TestAs;
let rs: TestRs;

beforeAll(async () => {
  [as, rs] = await startNotesPair();
});
afterAll(async () => {
  await rs?.close();
  await as?.close();
});

function newClient(events: McpAuthEvent[] = []) {
  return new McpAuthClient({
    clientName: 'flow test',
    store: new MemoryStore(),
    openAuthorizationUrl: headlessBrowser,
    onEvent: (e) => events.push(e),
  });
}

const call = (tool: string) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: tool } }),
});

/** A first call through `send` signs in; returns where `store` bound the server and the tokens it holds. */
async function signIn(send: (url: string, init: RequestInit) => Promise<Response>, store: AuthStore) {
  expect((await send(rs.mcpUrl, call('read'))).status).toBe(200);
  const binding = (await store.getServer(rs.mcpUrl))!;
  return { binding, tokens: (await store.getTokens(binding.issuer, binding.resource))! };
}

describe('end-to-end against oidc-provider', () => {
  it('401 → PRM → AS metadata → DCR (native) → PKCE authorization with resource + iss → token → retried request', async () => {
    const events: McpAuthEvent[] = [];
    const client = newClient(events);
    const res = await client.fetch(rs.mcpUrl, call('read'));
    expect(res.status).toBe(200);
    expect(((await res.json()) as { scope: string[] }).scope).toContain('notes:read');
    const reg = as.registrations.at(-1)!;
    expect(reg.application_type).toBe('native');
    expect(reg.redirect_uris).toEqual([expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/callback$/)]);
    expect(reg.grant_types).toContain('refresh_token');
    const authz = as.authorizationRequests.at(-1)!;
    expect(authz.get('code_challenge_method')).toBe('S256');
    expect(authz.get('resource')).toBe(rs.mcpUrl);
    expect(authz.get('scope')).toBe('notes:read offline_access');
    expect(authz.get('state')).toBeTruthy();
    const tokenReq = as.tokenRequests.at(-1)!;
    expect(tokenReq.get('grant_type')).toBe('authorization_code');
    expect(tokenReq.get('resource')).toBe(rs.mcpUrl);
    expect(tokenReq.get('code_verifier')).toBeTruthy();
    expect(events.map((e) => e.type)).toEqual(['discovered', 'registered', 'authorization_url', 'waiting_for_callback', 'authorized']);
    const last = rs.requests.at(-1)!;
    expect(last.authorization).toMatch(/^Bearer /);
  });

  it('refresh: rotation is persisted and RFC 8707 resource is sent on the refresh request', async () => {
    const store = new MemoryStore();
    const client = new McpAuthClient({ clientName: 'refresh test', store, openAuthorizationUrl: headlessBrowser });
    const { binding, tokens: before } = await signIn((url, init) => client.fetch(url, init), store);
    expect(before.refresh_token).toBeTruthy();
    // Expire the access token locally: the next call must refresh first.
    await store.setTokens({ ...before, expires_at: Math.floor(Date.now() / 1000) - 1 });
    const n = as.tokenRequests.length;
    expect((await client.fetch(rs.mcpUrl, call('read'))).status).toBe(200);
    const refreshReq = as.tokenRequests[n]!;
    expect(refreshReq.get('grant_type')).toBe('refresh_token');
    expect(refreshReq.get('resource')).toBe(rs.mcpUrl);
    const after = (await store.getTokens(binding.issuer, binding.resource))!;
    expect(after.refresh_token).toBeTruthy();
    expect(after.refresh_token).not.toBe(before.refresh_token);
    expect(after.access_token).not.toBe(before.access_token);
  });

  it('single-flight refresh: concurrent callers share one refresh request (a rotated refresh token is redeemed once)', async () => {
    const store = new MemoryStore();
    const client = new McpAuthClient({ clientName: 'sf test', store, openAuthorizationUrl: headlessBrowser });
    const { tokens: t } = await signIn((url, init) => client.fetch(url, init), store);
    await store.setTokens({ ...t, expires_at: 0 });
    const n = as.tokenRequests.length;
    const results = await Promise.all(Array.from({ length: 5 }, () => client.fetch(rs.mcpUrl, call('read'))));
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    const refreshes = as.tokenRequests.slice(n).filter((p) => p.get('grant_type') === 'refresh_token');
    expect(refreshes).toHaveLength(1);
  });

  it('RFC 6750 §3.1 invalid_token + OAuth 2.1 §4.3.1 rotation: five concurrent 401s for the old access token through the authenticated fetch cause exactly ONE refresh request at the AS', async () => {
    const store = new MemoryStore();
    const events: McpAuthEvent[] = [];
    // Barrier in the client's transport: the five requests carrying the old token are all in flight
    // before any of them reaches the resource server, so every one of them is answered 401.
    let gate: { token: string; waiting: (() => void)[] } | undefined;
    const client = new McpAuthClient({
      clientName: '401 single flight',
      store,
      openAuthorizationUrl: headlessBrowser,
      onEvent: (e) => events.push(e),
      fetch: async (input, init) => {
        const auth = input instanceof Request ? input.headers.get('authorization') : new Headers(init?.headers).get('authorization');
        const g = gate;
        if (g && auth === `Bearer ${g.token}`) {
          await new Promise<void>((resolve) => {
            g.waiting.push(resolve);
            if (g.waiting.length === 5) for (const release of g.waiting) release();
          });
        }
        return globalThis.fetch(input, init);
      },
    });
    const authFetch = createAuthFetch(client);
    const { binding, tokens: old } = await signIn(authFetch, store);
    expect(old.refresh_token).toBeTruthy();
    // The access token is not locally expired: only the resource server's 401 can trigger the refresh.
    expect(old.expires_at! - 30).toBeGreaterThan(Math.floor(Date.now() / 1000));
    rs.revoked.add(old.access_token);
    gate = { token: old.access_token, waiting: [] };
    const tokenHits = as.hits.get('/token') ?? 0;
    const tokenHttp = as.tokenHttp.length;
    const grants = as.tokenRequests.length;
    const authorizations = as.authorizationRequests.length;
    const seen = rs.requests.length;
    events.length = 0;

    const results = await Promise.all(Array.from({ length: 5 }, () => authFetch(rs.mcpUrl, call('read'))));

    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    // AS side: one HTTP request to the token endpoint, a refresh_token grant redeeming the old refresh token.
    expect((as.hits.get('/token') ?? 0) - tokenHits).toBe(1);
    expect(as.tokenHttp.slice(tokenHttp).map((t) => t.status)).toEqual([200]);
    const refreshes = as.tokenRequests.slice(grants);
    expect(refreshes).toHaveLength(1);
    expect(refreshes[0]!.get('grant_type')).toBe('refresh_token');
    expect(refreshes[0]!.get('refresh_token')).toBe(old.refresh_token);
    expect(as.authorizationRequests.length).toBe(authorizations);
    expect(events.filter((e) => e.type === 'refreshed')).toHaveLength(1);
    // RS side: each of the five sent the old token once (401 invalid_token), then the new token once.
    const next = (await store.getTokens(binding.issuer, binding.resource))!;
    expect(next.access_token).not.toBe(old.access_token);
    expect(next.refresh_token).not.toBe(old.refresh_token);
    const later = rs.requests.slice(seen);
    expect(later.filter((r) => r.authorization === `Bearer ${old.access_token}`)).toHaveLength(5);
    expect(later.filter((r) => r.authorization === `Bearer ${next.access_token}`)).toHaveLength(5);
    expect(later).toHaveLength(10);
    // The rotated refresh token is still good (no reuse detection tripped): one more refresh works.
    await store.setTokens({ ...next, expires_at: 0 });
    expect((await authFetch(rs.mcpUrl, call('read'))).status).toBe(200);
    expect(as.tokenRequests.at(-1)!.get('refresh_token')).toBe(next.refresh_token);
    expect(as.authorizationRequests.length).toBe(authorizations);
  });

  it('RFC 6750 §3.1 invalid_token + OAuth 2.1 §4.3.1 rotation: a 401 for a token that another caller refreshed meanwhile is retried with the newer token, not refreshed again', async () => {
    // A store read that races with another process's refresh: it returns what it read before the
    // rotation landed (the refused token), while the store already holds the newer one.
    let rotateDuringRead: (() => Promise<unknown>) | undefined;
    class RacyStore extends MemoryStore {
      override async getTokens(issuer: string, resource: string) {
        const snapshot = await super.getTokens(issuer, resource);
        const rotate = rotateDuringRead;
        rotateDuringRead = undefined;
        if (rotate) await rotate();
        return snapshot;
      }
    }
    const store = new RacyStore();
    let onUnauthorized: (() => void) | undefined;
    const client = new McpAuthClient({
      clientName: 'racy store',
      store,
      openAuthorizationUrl: headlessBrowser,
      fetch: async (input, init) => {
        const res = await globalThis.fetch(input, init);
        if (res.status === 401) onUnauthorized?.();
        return res;
      },
    });
    const { binding, tokens: old } = await signIn((url, init) => client.fetch(url, init), store);
    rs.revoked.add(old.access_token);
    const other = new McpAuthClient({ clientName: 'other process', store, openAuthorizationUrl: headlessBrowser });
    onUnauthorized = () => {
      onUnauthorized = undefined;
      rotateDuringRead = () => other.refresh(binding, old.access_token);
    };
    const grants = as.tokenRequests.length;
    const seen = rs.requests.length;
    expect((await client.fetch(rs.mcpUrl, call('read'))).status).toBe(200);
    // Only the other caller's refresh reached the AS.
    const refreshes = as.tokenRequests.slice(grants);
    expect(refreshes.map((p) => p.get('grant_type'))).toEqual(['refresh_token']);
    expect(refreshes[0]!.get('refresh_token')).toBe(old.refresh_token);
    const next = (await store.getTokens(binding.issuer, binding.resource))!;
    expect(rs.requests.slice(seen).map((r) => r.authorization)).toEqual([`Bearer ${old.access_token}`, `Bearer ${next.access_token}`]);
  });

  it('cross-process single flight: two clients on one token file redeem the rotating refresh token once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mak-sf-'));
    try {
      const path = join(dir, 'store.json');
      const a = new McpAuthClient({ clientName: 'proc A', store: new FileStore(path), openAuthorizationUrl: headlessBrowser });
      expect((await a.fetch(rs.mcpUrl, call('read'))).status).toBe(200);
      const store = new FileStore(path);
      const binding = (await store.getServer(rs.mcpUrl))!;
      const t = (await store.getTokens(binding.issuer, binding.resource))!;
      await store.setTokens({ ...t, expires_at: 0 });
      // Separate FileStore instances share nothing in memory, like two processes.
      const b = new McpAuthClient({ clientName: 'proc B', store: new FileStore(path), openAuthorizationUrl: headlessBrowser });
      const c = new McpAuthClient({ clientName: 'proc C', store: new FileStore(path), openAuthorizationUrl: headlessBrowser });
      const n = as.tokenRequests.length;
      const results = await Promise.all([b.fetch(rs.mcpUrl, call('read')), c.fetch(rs.mcpUrl, call('read'))]);
      expect(results.map((r) => r.status)).toEqual([200, 200]);
      const refreshes = as.tokenRequests.slice(n).filter((p) => p.get('grant_type') === 'refresh_token');
      expect(refreshes).toHaveLength(1);
      expect(as.tokenRequests.slice(n).filter((p) => p.get('grant_type') === 'authorization_code')).toHaveLength(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('401 invalid_token with a refresh token → refresh and retry (no new authorization)', async () => {
    const store = new MemoryStore();
    const events: McpAuthEvent[] = [];
    const client = new McpAuthClient({
      clientName: '401 test',
      store,
      openAuthorizationUrl: headlessBrowser,
      onEvent: (e) => events.push(e),
    });
    const { tokens: t } = await signIn((url, init) => client.fetch(url, init), store);
    rs.revoked.add(t.access_token);
    events.length = 0;
    expect((await client.fetch(rs.mcpUrl, call('read'))).status).toBe(200);
    expect(events.map((e) => e.type)).toContain('refreshed');
    expect(events.map((e) => e.type)).not.toContain('authorization_url');
  });

  it('handleUnauthorized (for SDK authProvider hosts): a refused stored token is refreshed, not re-authorized', async () => {
    const store = new MemoryStore();
    const events: McpAuthEvent[] = [];
    const client = new McpAuthClient({ clientName: 'hu', store, openAuthorizationUrl: headlessBrowser, onEvent: (e) => events.push(e) });
    const first = await client.authorize(rs.mcpUrl);
    rs.revoked.add(first.access_token);
    const res = await fetch(rs.mcpUrl, {
      ...call('read'),
      headers: { ...call('read').headers, authorization: `Bearer ${first.access_token}` },
    });
    expect(res.status).toBe(401);
    events.length = 0;
    const next = await client.handleUnauthorized(rs.mcpUrl, res);
    expect(next.access_token).not.toBe(first.access_token);
    expect(events.map((e) => e.type)).toContain('refreshed');
    expect(events.map((e) => e.type)).not.toContain('authorization_url');
  });

  it('MCP Step-Up Authorization Flow: 403 insufficient_scope → re-authorize with the union of scopes → retry', async () => {
    const client = newClient();
    expect((await client.fetch(rs.mcpUrl, call('read'))).status).toBe(200);
    const n = as.authorizationRequests.length;
    const res = await client.fetch(rs.mcpUrl, call('write'));
    expect(res.status).toBe(200);
    expect(((await res.json()) as { scope: string[] }).scope).toEqual(expect.arrayContaining(['notes:read', 'notes:write']));
    const stepUp = as.authorizationRequests[n]!;
    expect(stepUp.get('scope')!.split(' ')).toEqual(expect.arrayContaining(['notes:read', 'notes:write']));
    expect(stepUp.get('resource')).toBe(rs.mcpUrl);
  });

  it('RFC 7009: logout revokes the refresh token at the AS, which then refuses it', async () => {
    const store = new MemoryStore();
    const client = new McpAuthClient({ clientName: 'logout', store, openAuthorizationUrl: headlessBrowser });
    const { binding, tokens: t } = await signIn((url, init) => client.fetch(url, init), store);
    await client.logout(rs.mcpUrl);
    expect(await store.getTokens(binding.issuer, binding.resource)).toBeUndefined();
    const registration = (await store.getClient(binding.issuer))!;
    const res = await fetch(`${as.issuer}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: t.refresh_token!,
        client_id: registration.client_id,
        resource: rs.mcpUrl,
      }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toBe('invalid_grant');
  });

  it('credentials are reused from the store for the same issuer (no second registration)', async () => {
    const store = new MemoryStore();
    const a = new McpAuthClient({ clientName: 'reuse', store, openAuthorizationUrl: headlessBrowser });
    expect((await a.fetch(rs.mcpUrl, call('read'))).status).toBe(200);
    const regs = as.registrations.length;
    await a.logout(rs.mcpUrl);
    expect(await a.status()).toEqual([]);
    expect((await a.fetch(rs.mcpUrl, call('read'))).status).toBe(200);
    expect(as.registrations.length).toBe(regs);
  });
});
