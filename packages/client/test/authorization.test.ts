import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { validateAuthorizationResponse } from '../src/core.js';
import { ERR, McpAuthClient, MemoryStore, type McpAuthClientOptions } from '../src/index.js';
import { startFakeRs } from './helpers/fake-servers.js';
import { headlessBrowser } from './helpers/harness.js';
import { fakePairs } from './helpers/fake-pair.js';

const { pair, cleanups } = fakePairs();
const client = (o: Partial<McpAuthClientOptions> = {}) =>
  new McpAuthClient({
    clientName: 'authz test',
    store: new MemoryStore(),
    openAuthorizationUrl: headlessBrowser,
    authorizationTimeoutMs: 5000,
    ...o,
  });

const AS = 'https://as.example';
const cb = (q: Record<string, string>) => new URL(`http://127.0.0.1:1/callback?${new URLSearchParams(q)}`);

describe('MCP Authorization Response Validation (RFC 9207 §2.4 table)', () => {
  const supported = { issuer: AS, authorization_response_iss_parameter_supported: true };
  const unsupported = { issuer: AS };
  it('supported + iss present and equal → accepted', () => {
    expect(validateAuthorizationResponse(supported, 'c', cb({ code: 'x', state: 's', iss: AS }), 's').get('code')).toBe('x');
  });
  it('supported + iss present and different → rejected', () => {
    expect(() =>
      validateAuthorizationResponse(supported, 'c', cb({ code: 'x', state: 's', iss: 'https://evil.example' }), 's'),
    ).toThrowError(expect.objectContaining({ code: ERR.AUTHORIZATION_RESPONSE_INVALID }));
  });
  it('supported + iss absent → rejected', () => {
    expect(() => validateAuthorizationResponse(supported, 'c', cb({ code: 'x', state: 's' }), 's')).toThrowError(
      expect.objectContaining({ code: ERR.AUTHORIZATION_RESPONSE_INVALID }),
    );
  });
  it('unsupported + iss present → compared anyway (mismatch rejected, match accepted)', () => {
    expect(() =>
      validateAuthorizationResponse(unsupported, 'c', cb({ code: 'x', state: 's', iss: 'https://evil.example' }), 's'),
    ).toThrowError(expect.objectContaining({ code: ERR.AUTHORIZATION_RESPONSE_INVALID }));
    expect(validateAuthorizationResponse(unsupported, 'c', cb({ code: 'x', state: 's', iss: AS }), 's').get('code')).toBe('x');
  });
  it('unsupported + iss absent → proceed', () => {
    expect(validateAuthorizationResponse(unsupported, 'c', cb({ code: 'x', state: 's' }), 's').get('code')).toBe('x');
  });
  it('simple string comparison: no trailing-slash, case or default-port normalization', () => {
    for (const iss of [`${AS}/`, 'HTTPS://AS.EXAMPLE', 'https://as.example:443', 'https://as%2Eexample']) {
      expect(() => validateAuthorizationResponse(supported, 'c', cb({ code: 'x', state: 's', iss }), 's')).toThrowError(
        expect.objectContaining({ code: ERR.AUTHORIZATION_RESPONSE_INVALID }),
      );
    }
  });
  it('an error response whose iss mismatches is not acted on: its error fields are neither reported nor displayed', () => {
    try {
      validateAuthorizationResponse(
        supported,
        'c',
        cb({ error: 'access_denied', error_description: 'ATTACKER TEXT', state: 's', iss: 'https://evil.example' }),
        's',
      );
      expect.unreachable();
    } catch (err) {
      expect(err).toMatchObject({ code: ERR.AUTHORIZATION_RESPONSE_INVALID });
      expect((err as { error?: string }).error).toBeUndefined();
      expect(String((err as Error).message)).not.toContain('ATTACKER');
      expect(String((err as Error).message)).not.toContain('access_denied');
    }
  });
  it('an error response with the right iss is reported with its OAuth error code', () => {
    expect(() => validateAuthorizationResponse(supported, 'c', cb({ error: 'access_denied', state: 's', iss: AS }), 's')).toThrowError(
      expect.objectContaining({ code: ERR.AUTHORIZATION_DENIED, error: 'access_denied' }),
    );
  });
  it('Security Considerations §Open Redirection: state missing or different → discarded', () => {
    expect(() => validateAuthorizationResponse(supported, 'c', cb({ code: 'x', iss: AS }), 's')).toThrowError(
      expect.objectContaining({ code: ERR.AUTHORIZATION_RESPONSE_INVALID }),
    );
    expect(() => validateAuthorizationResponse(supported, 'c', cb({ code: 'x', state: 'other', iss: AS }), 's')).toThrowError(
      expect.objectContaining({ code: ERR.AUTHORIZATION_RESPONSE_INVALID }),
    );
  });
});

describe('authorization flow security (through real HTTP)', () => {
  it('RFC 9207 mix-up: a code delivered with a foreign iss is never sent to the token endpoint', async () => {
    const [as, rs] = await pair({ respond: (q) => ({ code: 'stolen', state: q.get('state')!, iss: 'https://honest.example' }) });
    await expect(client().fetch(rs.mcpUrl)).rejects.toMatchObject({ code: ERR.AUTHORIZATION_RESPONSE_INVALID });
    expect(as.tokenRequests).toHaveLength(0);
  });

  it('a callback with a wrong state is discarded (the listener keeps waiting) and its code never redeemed', async () => {
    const [as, rs] = await pair({ respond: (_q, iss) => ({ code: 'injected', state: 'attacker-state', iss }) });
    await expect(client({ authorizationTimeoutMs: 500 }).fetch(rs.mcpUrl)).rejects.toMatchObject({ code: ERR.AUTHORIZATION_TIMEOUT });
    expect(as.tokenRequests).toHaveLength(0);
  });

  it('supported iss but the AS omits it → rejected before any token request', async () => {
    const [as, rs] = await pair({ respond: (q) => ({ code: 'c', state: q.get('state')! }) });
    await expect(client().fetch(rs.mcpUrl)).rejects.toMatchObject({ code: ERR.AUTHORIZATION_RESPONSE_INVALID });
    expect(as.tokenRequests).toHaveLength(0);
  });

  it('authorization request carries PKCE S256, state, resource and the challenge scope; token request repeats resource and the verifier', async () => {
    const [as, rs] = await pair({}, { scope: 'files:read' });
    expect((await client().fetch(rs.mcpUrl)).status).toBe(200);
    const a = as.authorizations[0]!;
    expect(a.get('response_type')).toBe('code');
    expect(a.get('code_challenge_method')).toBe('S256');
    expect(a.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(a.get('state')!.length).toBeGreaterThanOrEqual(22);
    expect(a.get('resource')).toBe(rs.mcpUrl);
    expect(a.get('scope')).toBe('files:read');
    expect(a.get('redirect_uri')).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    const t = as.tokenRequests[0]!.body;
    expect(t.get('resource')).toBe(rs.mcpUrl);
    expect(t.get('code_verifier')).toMatch(/^[A-Za-z0-9_-]{43,128}$/);
    // RFC 7636 §4.6: the AS recomputes BASE64URL(SHA-256(code_verifier)) and compares
    expect(createHash('sha256').update(t.get('code_verifier')!).digest('base64url')).toBe(a.get('code_challenge'));
    expect(t.get('redirect_uri')).toBe(a.get('redirect_uri'));
  });

  it('Scope Selection: without a challenge scope, the PRM scopes_supported are requested', async () => {
    const [as, rs] = await pair();
    expect((await client().fetch(rs.mcpUrl)).status).toBe(200);
    expect(as.authorizations[0]!.get('scope')).toBe('basic');
  });

  it('Security Considerations §PKCE: an AS without code_challenge_methods_supported is refused before the browser opens', async () => {
    const [as, rs] = await pair({ metadata: { code_challenge_methods_supported: undefined } });
    let opened = false;
    const openAuthorizationUrl = async () => {
      opened = true;
    };
    await expect(client({ openAuthorizationUrl }).fetch(rs.mcpUrl)).rejects.toMatchObject({ code: ERR.PKCE_NOT_SUPPORTED });
    expect(opened).toBe(false);
    expect(as.registrations).toHaveLength(0);
  });

  it('Security Best Practices: a javascript: authorization_endpoint is never opened', async () => {
    const [, rs] = await pair({ metadata: { authorization_endpoint: 'javascript:alert(document.cookie)' } });
    let opened = false;
    const openAuthorizationUrl = async () => {
      opened = true;
    };
    await expect(client({ openAuthorizationUrl }).fetch(rs.mcpUrl)).rejects.toMatchObject({ code: ERR.URL_FORBIDDEN });
    expect(opened).toBe(false);
  });

  it('SSRF: a token endpoint outside https/loopback is refused before any request', async () => {
    const [, rs] = await pair({ metadata: { token_endpoint: 'http://169.254.169.254/token' } });
    await expect(client().fetch(rs.mcpUrl)).rejects.toMatchObject({ code: ERR.URL_FORBIDDEN });
  });

  it('no openAuthorizationUrl → MCP_AUTH_INTERACTION_REQUIRED', async () => {
    const [, rs] = await pair();
    const c = new McpAuthClient({ clientName: 'headless' });
    await expect(c.fetch(rs.mcpUrl)).rejects.toMatchObject({ code: ERR.INTERACTION_REQUIRED });
  });

  it('the authorization wait times out with a coded error when no callback arrives', async () => {
    const [, rs] = await pair();
    await expect(client({ openAuthorizationUrl: async () => {}, authorizationTimeoutMs: 200 }).fetch(rs.mcpUrl)).rejects.toMatchObject({
      code: ERR.AUTHORIZATION_TIMEOUT,
    });
  });

  it('MCP Token Requirements: tokens go in the Authorization header only, never in the URL', async () => {
    const [as, rs] = await pair();
    const seenUrls: string[] = [];
    const c = client({ fetch: (i, init) => (seenUrls.push(i instanceof Request ? i.url : String(i)), fetch(i, init)) });
    expect((await c.fetch(`${rs.mcpUrl}?x=1`)).status).toBe(200);
    for (const t of as.tokens) for (const u of seenUrls) expect(u).not.toContain(t);
    expect(rs.seenTokens.at(-1)).toMatch(/^at-/);
  });

  it('MCP Token Handling: a token obtained for one MCP server is never sent to another', async () => {
    const [as, rs1] = await pair();
    const rs2 = await startFakeRs(as);
    cleanups.push(rs2);
    const c = client();
    expect((await c.fetch(rs1.mcpUrl)).status).toBe(200);
    const tokenForRs1 = rs1.seenTokens.at(-1);
    expect((await c.fetch(rs2.mcpUrl)).status).toBe(200);
    expect(rs2.seenTokens[0]).toBeUndefined();
    expect(rs2.seenTokens).not.toContain(tokenForRs1);
    // rs2 got its own resource-bound token.
    expect(as.tokenRequests.at(-1)!.body.get('resource')).toBe(rs2.mcpUrl);
  });
});

describe('token lifecycle edge cases', () => {
  it('an expired access token without a refresh token leads to one new authorization, not a loop', async () => {
    const [as, rs] = await pair();
    const store = new MemoryStore();
    const c = client({ store });
    expect((await c.fetch(rs.mcpUrl)).status).toBe(200);
    const binding = (await store.getServer(rs.mcpUrl))!;
    const t = (await store.getTokens(binding.issuer, binding.resource))!;
    const { refresh_token: _drop, ...noRefresh } = t;
    await store.setTokens({ ...noRefresh, expires_at: 1 });
    expect((await c.fetch(rs.mcpUrl)).status).toBe(200);
    expect(as.authorizations).toHaveLength(2);
    // The expired token was never presented again.
    expect(rs.seenTokens.filter((x) => x === t.access_token)).toHaveLength(1);
  });

  it('a server that rejects every token: the call ends with its 401 after one refresh and one authorization', async () => {
    const [as, rs] = await pair();
    const c = client();
    expect((await c.fetch(rs.mcpUrl)).status).toBe(200);
    rs.rejectAll = true;
    const res = await c.fetch(rs.mcpUrl);
    expect(res.status).toBe(401);
    expect(as.authorizations).toHaveLength(2); // the first login + exactly one new authorization
    expect(as.tokenRequests.filter((t) => t.body.get('grant_type') === 'refresh_token')).toHaveLength(1);
    expect(rs.seenTokens.length).toBeLessThanOrEqual(5);
  });
});

describe('MCP Step-Up Authorization Flow retry limits', () => {
  it('the same scope set challenged again after a step-up is a permanent failure: the 403 is returned, no loop', async () => {
    const [as, rs] = await pair({}, { insufficient: () => 'admin' });
    const c = client({ maxStepUpAttempts: 3 });
    const res = await c.fetch(rs.mcpUrl);
    expect(res.status).toBe(403);
    expect(as.authorizations).toHaveLength(2); // initial + one step-up with the union
    expect(as.authorizations[1]!.get('scope')!.split(' ')).toEqual(expect.arrayContaining(['basic', 'admin']));
    // Tracked per (resource, scope set): a later request does not re-authorize for it again.
    expect((await c.fetch(rs.mcpUrl)).status).toBe(403);
    expect(as.authorizations).toHaveLength(2);
  });

  it('a server escalating forever is cut off after maxStepUpAttempts re-authorizations', async () => {
    let n = 0;
    const [as, rs] = await pair({}, { insufficient: () => `level${++n}` });
    const res = await client({ maxStepUpAttempts: 2 }).fetch(rs.mcpUrl);
    expect(res.status).toBe(403);
    expect(as.authorizations).toHaveLength(3); // initial + 2 step-ups
    expect(as.authorizations[2]!.get('scope')!.split(' ')).toEqual(expect.arrayContaining(['basic', 'level1', 'level2']));
  });

  it('403 without insufficient_scope is returned as is, no re-authorization', async () => {
    const [as, rs] = await pair();
    const c = client({
      fetch: async (i, init) => {
        const r = await fetch(i, init);
        const req = new Request(i, init);
        return req.headers.get('authorization') ? new Response('forbidden', { status: 403 }) : r;
      },
    });
    expect((await c.fetch(rs.mcpUrl)).status).toBe(403);
    expect(as.authorizations).toHaveLength(1);
  });

  it('concurrent 401s share one authorization flow', async () => {
    const [as, rs] = await pair();
    const c = client();
    const results = await Promise.all([c.fetch(rs.mcpUrl), c.fetch(rs.mcpUrl), c.fetch(rs.mcpUrl)]);
    expect(results.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(as.authorizations).toHaveLength(1);
  });
});
