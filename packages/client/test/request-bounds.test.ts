import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { discoverAuthorizationServer, discoverProtectedResource } from '../src/core.js';
import { enterpriseManagedAssertion, ERR, McpAuthClient } from '../src/index.js';
import { DEFAULT_REQUEST_LIMITS, requestLimits, type HttpDeps } from '../src/http.js';
import { oauthServer, startHostileServer } from './helpers/hostile-server.js';
import { closeAfterEach, refusal } from './helpers/scratch.js';

/**
 * Issue 46 items 2 and 5: every request of the client has a deadline (headers AND body) and a
 * size bound, so a hostile or broken server (MCP security best practices: the client talks to
 * servers a stranger names) cannot hold the client for minutes or fill its memory. Short deadlines
 * here keep the tests fast; one test pins that the defaults are finite.
 */
const hostile = closeAfterEach(startHostileServer);
const deps = (limits: HttpDeps['limits']): HttpDeps => ({ fetch: (i, init) => globalThis.fetch(i, init), limits });

function machineClient(issuer: string, extra: Partial<ConstructorParameters<typeof McpAuthClient>[0]> = {}) {
  return new McpAuthClient({
    clientName: 'bounds test',
    clientCredentials: { client_id: 'm2m', client_secret: 's3cret', issuer },
    requestTimeoutMs: 400,
    ...extra,
  });
}

describe('request deadline (issue 46 item 2)', () => {
  it('AS metadata trickled one byte at a time: refused at the deadline, not when the server stops', async () => {
    const s = await hostile((path) => (path.startsWith('/.well-known/') ? { trickle: { everyMs: 50 } } : undefined));
    const { err, ms } = await refusal(discoverAuthorizationServer(s.base, deps({ timeoutMs: 400 })));
    expect(err.code).toBe(ERR.SERVER_UNREACHABLE);
    expect(err.message).toMatch(/did not answer in time \(no complete answer within 0\.4 s\)/);
    expect(ms).toBeLessThan(3000);
  });

  it('protected resource metadata that never sends headers: refused at the deadline', async () => {
    const s = await hostile(() => ({ silent: true }));
    const { err, ms } = await refusal(discoverProtectedResource(`${s.base}/mcp`, deps({ timeoutMs: 400 })));
    expect(err.code).toBe(ERR.SERVER_UNREACHABLE);
    expect(err.message).toMatch(/in time/);
    // the first silent URL ends the search: the deadline is not paid once per candidate URL
    expect(ms).toBeLessThan(2000);
    expect(s.seen).toHaveLength(1);
  });

  it('a token endpoint that never sends headers: the grant fails at the deadline', async () => {
    const s = await hostile(oauthServer({ silent: true }));
    const { err, ms } = await refusal(machineClient(s.base).authorize(`${s.base}/mcp`));
    expect(err.code).toBe(ERR.SERVER_UNREACHABLE);
    expect(err.message).toMatch(/authorization server endpoint at http:\/\/127\.0\.0\.1:\d+ did not answer in time/);
    expect(ms).toBeLessThan(3000);
  });

  it('a token response trickled after its headers: the grant fails at the deadline', async () => {
    const s = await hostile(oauthServer({ trickle: { everyMs: 50 } }));
    const { err, ms } = await refusal(machineClient(s.base).authorize(`${s.base}/mcp`));
    expect(err.code).toBe(ERR.SERVER_UNREACHABLE);
    expect(err.message).toMatch(/no complete answer within 0\.4 s/);
    expect(ms).toBeLessThan(3000);
  });

  it('an MCP server that never sends response headers: the request fails at the deadline', async () => {
    const s = await hostile(() => ({ silent: true }));
    const client = new McpAuthClient({ clientName: 'bounds test', requestTimeoutMs: 400 });
    const { err, ms } = await refusal(client.fetch(`${s.base}/mcp`, { method: 'POST', body: '{}' }));
    expect(err.code).toBe(ERR.SERVER_UNREACHABLE);
    expect(err.message).toMatch(/the MCP server at http:\/\/127\.0\.0\.1:\d+ did not answer in time \(no response headers/);
    expect(ms).toBeLessThan(3000);
  });

  it("the caller's own abort signal still ends a request (the deadline is added, not substituted)", async () => {
    const s = await hostile(() => ({ silent: true }));
    const client = new McpAuthClient({ clientName: 'bounds test', requestTimeoutMs: 60_000 });
    const started = Date.now();
    const err = await client
      .fetch(`${s.base}/mcp`, { method: 'POST', body: '{}', signal: AbortSignal.timeout(200) })
      .catch((e: unknown) => e);
    expect((err as Error).name).toBe('TimeoutError');
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('the defaults are finite: 30 s per request, 1 MiB per OAuth response; bad overrides are refused', () => {
    expect(DEFAULT_REQUEST_LIMITS).toEqual({ timeoutMs: 30_000, maxResponseBytes: 1024 * 1024, maxMessageBytes: 8 * 1024 * 1024 });
    expect(requestLimits({})).toEqual(DEFAULT_REQUEST_LIMITS);
    expect(requestLimits({ limits: { timeoutMs: Number.POSITIVE_INFINITY, maxResponseBytes: -1, maxMessageBytes: Number.NaN } })).toEqual(
      DEFAULT_REQUEST_LIMITS,
    );
    expect(requestLimits({ limits: { timeoutMs: 5 } })).toEqual({
      timeoutMs: 5,
      maxResponseBytes: 1024 * 1024,
      maxMessageBytes: 8 * 1024 * 1024,
    });
    for (const bad of [0, -1, Number.POSITIVE_INFINITY, Number.NaN]) {
      expect(() => new McpAuthClient({ clientName: 'x', requestTimeoutMs: bad })).toThrow(/"requestTimeoutMs" must be a finite number/);
      expect(() => new McpAuthClient({ clientName: 'x', maxResponseBytes: bad })).toThrow(/"maxResponseBytes" must be a finite number/);
    }
  });
});

describe('response size bound (issue 46 item 5)', () => {
  const BIG = 64 * 1024 * 1024;

  it('a 64 MB metadata document generated on the fly is refused after the first MiB, not read whole', async () => {
    const s = await hostile((path) => (path.startsWith('/.well-known/') ? { huge: { bytes: BIG } } : undefined));
    const { err } = await refusal(discoverAuthorizationServer(s.base, deps({ timeoutMs: 10_000 })));
    expect(err.code).toBe(ERR.RESPONSE_TOO_LARGE);
    expect(err.message).toMatch(/larger than 1048576 bytes; refused/);
    // the error is short: none of the document is in it
    expect(err.message.length).toBeLessThan(300);
    // the client stopped reading: the server could not push the whole document
    await new Promise((r) => setTimeout(r, 100));
    expect(s.hugeBytesSent).toBeLessThan(BIG / 2);
  });

  it('a declared Content-Length over the bound is refused before reading the body', async () => {
    const s = await hostile((path) => (path.startsWith('/.well-known/') ? { huge: { bytes: BIG, declare: true } } : undefined));
    const { err } = await refusal(discoverAuthorizationServer(s.base, deps({ maxResponseBytes: 4096 })));
    expect(err.code).toBe(ERR.RESPONSE_TOO_LARGE);
    expect(err.message).toMatch(/larger than 4096 bytes/);
  });

  it('a huge token response is refused (the bound covers oauth4webapi reads too)', async () => {
    const s = await hostile(oauthServer({ huge: { bytes: 8 * 1024 * 1024 } }));
    const { err } = await refusal(
      machineClient(s.base, { requestTimeoutMs: 10_000, maxResponseBytes: 64 * 1024 }).authorize(`${s.base}/mcp`),
    );
    expect(err.code).toBe(ERR.RESPONSE_TOO_LARGE);
  });

  it('a document within the bound is read as before', async () => {
    const s = await hostile(oauthServer({ json: { access_token: 'at', token_type: 'Bearer', expires_in: 60 } }));
    const tokens = await machineClient(s.base).authorize(`${s.base}/mcp`);
    expect(tokens.access_token).toBe('at');
  });
});

/**
 * One place sets the bounds: http.ts `limitedFetch` is the only call of the configured fetch. Every
 * other way a request could leave the client's sources is listed here with why it is bounded; a
 * new fetch call, fetch hook or HTTP client import fails this scan until it goes through http.ts.
 */
describe('source scan: no request of the client bypasses the bounds', () => {
  const SRC = fileURLToPath(new URL('../src/', import.meta.url));
  const files = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? files(path) : name.endsWith('.ts') ? [path] : [];
    });
  const DETECT =
    /(?<![\w$])fetch\s*\(|\.fetch\s*\(|customFetch\]\s*:|globalThis\.fetch|from\s+'(?:node:(?:https?|http2|net|tls)|undici|node-fetch|axios|got)'|new\s+XMLHttpRequest|WebSocket\s*\(/;
  const ALLOWED: Array<{ file: string; line: RegExp; why: string }> = [
    {
      file: 'http.ts',
      line: /res = await deps\.fetch\(input, \{ \.\.\.init, signal \}\);/,
      why: 'limitedFetch: the deadline and size bound',
    },
    {
      file: 'oauth.ts',
      line: /\[oauth\.customFetch\]: policyFetch\(deps\)/,
      why: 'oauth4webapi token/revocation requests: policyFetch → egressFetch → limitedFetch',
    },
    {
      file: 'dpop.ts',
      line: /\[oauth\.customFetch\]: \(url, init\) => resourceFetch\(deps, url, init/,
      why: 'DPoP MCP request: resourceFetch',
    },
    {
      file: 'client/context.ts',
      line: /const baseFetch = options\.fetch \?\? \(\(input, init\) => globalThis\.fetch\(input, init\)\);/,
      why: 'the base fetch, stored as deps.fetch: called only by limitedFetch',
    },
    {
      file: 'client/enterprise-managed.ts',
      line: /fetch: options\.fetch \?\? \(\(i, init\) => globalThis\.fetch\(i, init\)\),/,
      why: 'the base fetch of the IdP exchange, stored as deps.fetch: requestIdJag → policyFetch → limitedFetch',
    },
    { file: 'client/mcp-auth-client.ts', line: /async fetch\(input: string \| URL \| Request, init\?: RequestInit\)/, why: 'a definition' },
    {
      file: 'client/sdk-adapters.ts',
      line: /return \(input, init\) => client\.fetch\(input, init\);/,
      why: 'McpAuthClient.fetch → sendWithTokens → resourceFetch',
    },
    { file: 'loopback.ts', line: /^import .* from 'node:http';$/, why: 'the loopback redirect listener: a server, no request' },
    { file: 'loopback.ts', line: /^import type \{ AddressInfo \} from 'node:net';$/, why: 'a type' },
  ];

  it('every hit is a listed site, each listed site is found once, and the bounded calls are where they say', () => {
    const hits: string[] = [];
    const unlisted: string[] = [];
    for (const path of files(SRC)) {
      const file = relative(SRC, path).replaceAll('\\', '/');
      readFileSync(path, 'utf8')
        .split('\n')
        .forEach((text, i) => {
          const code = text.trim();
          if (code.startsWith('*') || code.startsWith('//') || code.startsWith('/**') || !DETECT.test(code)) return;
          const site = ALLOWED.find((s) => s.file === file && s.line.test(code));
          if (site) hits.push(`${file}: ${site.why}`);
          else unlisted.push(`${file}:${i + 1}: ${code}`);
        });
    }
    expect(unlisted).toEqual([]);
    expect(hits.sort()).toEqual(ALLOWED.map((s) => `${s.file}: ${s.why}`).sort());
    const http = readFileSync(join(SRC, 'http.ts'), 'utf8');
    // both routes out of http.ts go through limitedFetch; MCP-server requests with both bounds
    // (review r46 F1): the deadline on headers and on a JSON body, the size bound per message
    expect(http).toMatch(/return await limitedFetch\(deps, input, options, what, 'whole'\);/);
    expect(http).toMatch(/return limitedFetch\(deps, input, init, 'the MCP server', 'message'\);/);
    expect(http).toMatch(/\? eventBoundedBody\(res\.body, max, tooLarge\)\n\s+: boundedBody\(res\.body, max, tooLarge, deadline\.signal, /);
    expect(http).toMatch(/const max = scope === 'whole' \? limits\.maxResponseBytes : limits\.maxMessageBytes;/);
    expect(http).not.toMatch(/scope === 'headers'/);
    expect(readFileSync(join(SRC, 'client/auth-fetch.ts'), 'utf8')).toMatch(
      /return resourceFetch\(parts\.context\.deps, original\.url, \{/,
    );
  });
});

describe('the enterprise IdP token exchange has the same bounds', () => {
  it('an IdP token endpoint that never answers fails at requestTimeoutMs', async () => {
    const s = await hostile(() => ({ silent: true }));
    const assertion = enterpriseManagedAssertion({
      idpTokenEndpoint: `${s.base}/token`,
      idpClientId: 'host',
      idToken: 'id.token.value',
      requestTimeoutMs: 400,
    });
    const { err, ms } = await refusal(assertion({ issuer: 'https://as.example', resource: 'https://rs.example/mcp' }));
    expect(err.code).toBe(ERR.SERVER_UNREACHABLE);
    expect(err.message).toMatch(/did not answer in time/);
    expect(ms).toBeLessThan(3000);
  });
});
