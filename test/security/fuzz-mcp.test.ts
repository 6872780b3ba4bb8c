import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { parseWwwAuthenticate } from '@mcp-auth-kit/client/core';
import { callWhoami, fullFlow, registerClient, startAttackStack, type AttackStack } from './helpers/support.js';
import { FUZZ_SCALE, FUZZ_SEED, fieldValue, fuzzHttp, headerValue, summarize, type FuzzRequest } from './helpers/fuzz.js';

/**
 * HTTP fuzzing of the demo MCP server behind our middleware (10,000 generated malformed
 * requests at FUZZ_SCALE=1): /mcp headers and bodies on both wires, with and without a valid
 * token, and the Protected Resource Metadata endpoints. No 5xx, no stack or file path, every
 * 401/403 challenge parses (RFC 9110 §11.6.1) and names resource_metadata (RFC 9728 §5.1),
 * never an unregistered `error` (RFC 6750 §3.1).
 */
describe('fuzz: MCP endpoint and Protected Resource Metadata over HTTP', () => {
  let stack: AttackStack;
  let token: string;
  const n = (count: number) => Math.max(1, Math.round(count * FUZZ_SCALE));
  const results: Array<{ label: string; count: number; statuses: Map<number, number> }> = [];

  beforeAll(async () => {
    stack = await startAttackStack();
    token = (await fullFlow(stack, await registerClient(stack), { scope: 'notes:read notes:write' })).access_token;
  });
  afterAll(async () => {
    for (const r of results)
      console.log(`fuzz ${r.label}: ${r.count} requests, statuses ${JSON.stringify(Object.fromEntries(r.statuses))}`);
    await stack?.close();
  });

  const sample = <T>(arb: fc.Arbitrary<T>, count: number, offset: number) =>
    fc.sample(arb, { numRuns: n(count), seed: FUZZ_SEED + 100 + offset });

  const challengeCheck = (res: { status: number; headers: Headers; text: string }): string | undefined => {
    if (res.status !== 401 && res.status !== 403) return undefined;
    const header = res.headers.get('www-authenticate');
    if (res.status === 401 && !header) return '401 without WWW-Authenticate';
    if (!header) return undefined;
    try {
      const bearer = parseWwwAuthenticate(header).find((c) => c.scheme === 'bearer' || c.scheme === 'dpop');
      if (!bearer) return 'no Bearer/DPoP challenge';
      if (!bearer.params.resource_metadata) return 'challenge without resource_metadata';
      const error = bearer.params.error;
      if (
        error !== undefined &&
        !['invalid_request', 'invalid_token', 'insufficient_scope', 'invalid_dpop_proof', 'use_dpop_nonce'].includes(error)
      )
        return `unregistered challenge error ${error}`;
    } catch {
      return `unparsable challenge: ${header.slice(0, 100)}`;
    }
    return undefined;
  };

  const methods = [
    'initialize',
    'tools/list',
    'tools/call',
    'resources/list',
    'prompts/list',
    'ping',
    'notifications/initialized',
    'logging/setLevel',
    'completion/complete',
    'server/discover',
    '',
  ];
  const tools = ['whoami', 'list_notes', 'add_note', 'nope', ''];
  const jsonRpc = fc.oneof(
    {
      weight: 4,
      arbitrary: fc.record(
        {
          jsonrpc: fc.oneof({ weight: 9, arbitrary: fc.constant('2.0') }, { weight: 1, arbitrary: fieldValue() }),
          id: fc.oneof(fc.integer(), fc.string({ maxLength: 10 }), fc.constant(null), fc.jsonValue({ maxDepth: 1 })),
          method: fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...methods) }, { weight: 1, arbitrary: fieldValue() }),
          params: fc.oneof(
            fc.record(
              {
                name: fc.oneof(fc.constantFrom(...tools), fieldValue()),
                arguments: fc.oneof(
                  fc.dictionary(fc.constantFrom('text', 'id', 'x'), fc.jsonValue({ maxDepth: 2 })),
                  fc.jsonValue({ maxDepth: 2 }),
                ),
              },
              { requiredKeys: [] },
            ),
            fc.record(
              {
                protocolVersion: fc.oneof(fc.constantFrom('2025-11-25', '2026-07-28', '1999-01-01'), fieldValue()),
                capabilities: fc.jsonValue({ maxDepth: 2 }),
                clientInfo: fc.jsonValue({ maxDepth: 2 }),
              },
              { requiredKeys: [] },
            ),
            fc.jsonValue({ maxDepth: 3 }),
          ),
        },
        { requiredKeys: ['jsonrpc', 'method'] },
      ),
    },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  );
  const body = fc.oneof(
    { weight: 5, arbitrary: jsonRpc.map((m) => JSON.stringify(m)) },
    { weight: 1, arbitrary: fc.array(jsonRpc, { maxLength: 4 }).map((m) => JSON.stringify(m)) },
    { weight: 1, arbitrary: fc.string({ maxLength: 200 }) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '',
        '{',
        '[',
        'null',
        '{"jsonrpc":"2.0"',
        '\u0000',
        `[${'['.repeat(2000)}${']'.repeat(2000)}]`,
        JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'add_note', arguments: { text: 'x'.repeat(100_000) } },
        }),
      ),
    },
  );
  const authorization = fc.oneof(
    { weight: 3, arbitrary: fc.constant('valid') },
    { weight: 1, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: headerValue.map((v) => `Bearer ${v}`) },
    { weight: 1, arbitrary: headerValue },
    { weight: 1, arbitrary: fc.constantFrom('tampered', 'truncated', 'lowercase-scheme', 'dpop-scheme') },
  );

  function resolveAuth(kind: string | undefined): string | undefined {
    switch (kind) {
      case undefined:
        return undefined;
      case 'valid':
        return `Bearer ${token}`;
      case 'tampered':
        return `Bearer ${token.slice(0, -4)}AAAA`;
      case 'truncated':
        return `Bearer ${token.slice(0, token.lastIndexOf('.'))}`;
      case 'lowercase-scheme':
        return `bearer ${token}`;
      case 'dpop-scheme':
        return `DPoP ${token}`;
      default:
        return kind;
    }
  }

  it('/mcp: 6,000 malformed requests (headers × bodies × methods, with and without a valid token)', async () => {
    // Mostly plausible values with a hostile one here and there, so requests get past each gate.
    const mostly = (good: fc.Arbitrary<string>, bad: fc.Arbitrary<string> = headerValue) =>
      fc.oneof({ weight: 8, arbitrary: good }, { weight: 1, arbitrary: bad }, { weight: 1, arbitrary: fc.constant('') });
    const headers = fc.record({
      accept: mostly(
        fc.constant('application/json, text/event-stream'),
        fc.oneof(fc.constantFrom('application/json', 'text/event-stream', '*/*', 'text/html'), headerValue),
      ),
      'content-type': mostly(
        fc.constant('application/json'),
        fc.oneof(fc.constantFrom('application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded'), headerValue),
      ),
      'mcp-protocol-version': mostly(
        fc.constantFrom('2025-11-25', '2026-07-28'),
        fc.oneof(fc.constantFrom('2025-03-26', '2024-11-05', '1999-01-01'), headerValue),
      ),
      'mcp-session-id': fc.oneof({ weight: 9, arbitrary: fc.constant('') }, { weight: 1, arbitrary: headerValue }),
      'mcp-method': fc.oneof(
        { weight: 3, arbitrary: fc.constant('') },
        { weight: 1, arbitrary: fc.constantFrom(...methods) },
        { weight: 1, arbitrary: headerValue },
      ),
      'mcp-name': fc.oneof(
        { weight: 3, arbitrary: fc.constant('') },
        { weight: 1, arbitrary: fc.constantFrom(...tools) },
        { weight: 1, arbitrary: headerValue },
      ),
      origin: fc.oneof(
        { weight: 6, arbitrary: fc.constant('') },
        { weight: 2, arbitrary: fc.constant('__own__') },
        { weight: 1, arbitrary: headerValue },
      ),
      'last-event-id': fc.oneof({ weight: 9, arbitrary: fc.constant('') }, { weight: 1, arbitrary: headerValue }),
      // RFC 9449 proofs: junk, and JWT-shaped junk that reaches the proof parser.
      dpop: fc.oneof(
        { weight: 8, arbitrary: fc.constant('') },
        { weight: 1, arbitrary: headerValue },
        {
          weight: 1,
          arbitrary: fc
            .tuple(fc.jsonValue({ maxDepth: 2 }), fc.jsonValue({ maxDepth: 2 }), fc.string({ maxLength: 20 }))
            .map(
              ([h, p, sig]) =>
                `${Buffer.from(JSON.stringify(h)).toString('base64url')}.${Buffer.from(JSON.stringify(p)).toString('base64url')}.${Buffer.from(sig).toString('base64url')}`,
            ),
        },
      ),
    });
    const own = new URL(stack.mcpUrl).origin;
    const requests = sample(
      fc.tuple(
        headers,
        authorization,
        body,
        fc.constantFrom('POST', 'POST', 'POST', 'POST', 'POST', 'POST', 'POST', 'POST', 'GET', 'DELETE', 'PUT', 'OPTIONS', 'HEAD'),
        fc.oneof({ weight: 12, arbitrary: fc.constant('') }, { weight: 1, arbitrary: fc.webQueryParameters().map((q) => `?${q}`) }),
      ),
      6000,
      1,
    ).map(([h, auth, b, method, query]): FuzzRequest => {
      const all: Record<string, string> = {};
      for (const [k, v] of Object.entries(h)) if (v !== undefined && v !== '') all[k] = v === '__own__' ? own : v;
      const value = resolveAuth(auth);
      if (value) all.authorization = value;
      return { label: '/mcp', method, url: `${stack.mcpUrl}${query}`, headers: all, body: b };
    });
    const { failures, statuses } = await fuzzHttp(requests, (_req, res) => challengeCheck(res));
    results.push({ label: '/mcp', count: requests.length, statuses });
    expect(failures, summarize(failures)).toHaveLength(0);
    // The corpus reached past the middleware into the MCP server, not only 401s.
    expect(statuses.get(200) ?? 0).toBeGreaterThan(requests.length / 200);
    expect(statuses.get(401) ?? 0).toBeGreaterThan(requests.length / 200);
  }, 90_000);

  it('Protected Resource Metadata and other paths: 4,000 malformed requests', async () => {
    const mcp = new URL(stack.mcpUrl);
    const paths = [
      `/.well-known/oauth-protected-resource${mcp.pathname}`,
      '/.well-known/oauth-protected-resource',
      '/.well-known/oauth-authorization-server',
      '/healthz',
      '/',
      mcp.pathname,
    ];
    const path = fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom(...paths) },
      { weight: 2, arbitrary: fc.tuple(fc.constantFrom(...paths), fc.webSegment()).map(([p, s]) => `${p.replace(/\/$/, '')}/${s}`) },
      { weight: 1, arbitrary: fc.webPath() },
      {
        weight: 1,
        arbitrary: fc.constantFrom(
          '/%ff',
          '/.well-known/%ff',
          '/.well-known/oauth-protected-resource/%2e%2e',
          `${mcp.pathname}/%00`,
          '/..%2f..%2fetc%2fpasswd',
        ),
      },
    );
    const requests = sample(
      fc.tuple(
        path,
        fc.webQueryParameters(),
        fc.constantFrom('GET', 'GET', 'GET', 'HEAD', 'OPTIONS', 'POST', 'PUT', 'DELETE'),
        headerValue,
        headerValue,
        authorization,
        body,
      ),
      4000,
      2,
    ).map(([p, q, method, accept, origin, auth, b]): FuzzRequest => {
      const value = resolveAuth(auth);
      return {
        label: 'prm',
        method,
        url: `${mcp.origin}${p}${q ? `?${q}` : ''}`,
        body: b,
        headers: {
          ...(accept && { accept }),
          ...(origin && { origin }),
          ...(value && { authorization: value }),
          'content-type': 'application/json',
        },
      };
    });
    const { failures, statuses } = await fuzzHttp(requests, (req, res) => {
      if (req.method === 'GET' && res.status === 200 && req.url.includes('/.well-known/oauth-protected-resource')) {
        try {
          const prm = JSON.parse(res.text) as { resource?: unknown; authorization_servers?: unknown };
          if (prm.resource !== stack.mcpUrl) return 'PRM with another resource';
        } catch {
          return 'PRM 200 that is not JSON';
        }
      }
      return challengeCheck(res);
    });
    results.push({ label: 'prm+paths', count: requests.length, statuses });
    expect(failures, summarize(failures)).toHaveLength(0);
  }, 60_000);

  it('the MCP server still serves a normal call after the fuzzing', async () => {
    expect((await callWhoami(stack.mcpUrl, token)).status).toBe(200);
  });
});
