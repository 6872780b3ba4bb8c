import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CookieJar } from 'tough-cookie';
import type { Logger } from '@mcp-auth-kit/authorization-server';
import { authorizationUrl, frontChannel, pkcePair, registerClient, startAttackStack, type AttackStack } from './helpers/support.js';

/**
 * Review 40, finding 3: with `trustProxy: true` express took the LEFTMOST X-Forwarded-For entry
 * as the client. Behind an appending proxy (nginx `$proxy_add_x_forwarded_for`, RFC 7239 §5.2 on
 * forwarded lists) that entry is whatever the client sent, so a rotating prefix made every guess
 * come from a fresh "address": the per-address login brakes (OWASP ASVS 4.0 §2.2.1) and the DCR
 * rate limit never held, and audit lines named the forged address. The class: every decision
 * keyed on the client's address reads ONE derivation (`client-address.ts`) that believes only
 * the entries appended by trusted hops; the scan at the end keeps it the only reader.
 *
 * The attacker connects from 127.0.0.7 (still loopback) so its real address differs from the
 * proxy's (127.0.0.1) and from the forged entries (TEST-NET ranges, never contacted).
 */
const ATTACKER = '127.0.0.7';

/** An appending reverse proxy on loopback: X-Forwarded-For += the peer it saw, then forwarded. */
async function appendingProxy(target: string): Promise<{ url: string; close(): Promise<void> }> {
  const upstream = new URL(target);
  const server: Server = createServer((req, res) => {
    const peer = (req.socket.remoteAddress ?? '').replace(/^::ffff:/, '');
    const prior = req.headers['x-forwarded-for'];
    const headers: IncomingHttpHeaders = { ...req.headers, host: upstream.host, 'x-forwarded-for': prior ? `${prior}, ${peer}` : peer };
    const out = request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    out.on('error', () => res.destroy());
    req.pipe(out);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** One request from the attacker's own loopback address (fetch cannot choose its source). */
function send(url: string, init: { method: string; headers: Record<string, string>; body?: string }) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const out = request(url, { method: init.method, headers: init.headers, localAddress: ATTACKER }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        body += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    out.on('error', reject);
    out.end(init.body);
  });
}

function recordingLogger() {
  const lines: Array<{ message: string; fields: Record<string, unknown> }> = [];
  const push = (message: string, fields: Record<string, unknown> = {}) => lines.push({ message, fields });
  const logger: Logger = { debug: push, info: push, warn: push, error: push };
  return { logger, lines };
}

const users = [{ username: 'victim', password: 'victim-password-1' }];
/** `true` means exactly one hop; the other forms name the same single proxy. */
const SETTINGS: Array<[string, boolean | number | string[]]> = [
  ['true (one hop)', true],
  ['1', 1],
  ['the proxy address', ['127.0.0.1']],
  ['the proxy CIDR', ['127.0.0.1/32']],
];

describe.each(SETTINGS)('attack: rotating the leftmost X-Forwarded-For behind one appending proxy (trustProxy %s)', (_, trustProxy) => {
  const log = recordingLogger();
  let stack: AttackStack;
  let proxy: Awaited<ReturnType<typeof appendingProxy>>;

  beforeAll(async () => {
    stack = await startAttackStack({
      devAutoLogin: undefined,
      quiet: false,
      logger: log.logger,
      authorizationServer: {
        trustProxy,
        users,
        loginThrottle: { perAddressAndUser: 3, perUser: 1000, perAddress: 5, windowSeconds: 900 },
        registration: { rateLimit: { max: 3, windowSeconds: 3600 } },
      },
    });
    proxy = await appendingProxy(stack.issuer);
  });
  afterAll(async () => {
    await proxy?.close();
    await stack?.close();
  });

  it('the login brakes hold: 3 guesses reach the password check, then 429 even for the right password', async () => {
    const clientId = await registerClient(stack);
    const jar = new CookieJar();
    const page = await frontChannel(stack.issuer, authorizationUrl(stack, { clientId, challenge: pkcePair().challenge }), jar);
    if (page.kind !== 'stopped') throw new Error('expected the login page');
    const action = new URL(/<form method="post" action="([^"]+)"/.exec(page.body)![1]!.replace(/&amp;/g, '&'), stack.issuer);
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.body)![1]!;
    const cookie = await jar.getCookieString(action.href);
    const post = (password: string, i: number) =>
      send(`${proxy.url}${action.pathname}${action.search}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie, 'x-forwarded-for': `198.51.100.${i}` },
        body: new URLSearchParams({ csrf, action: 'login', username: 'victim', password }).toString(),
      });
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) statuses.push((await post(`wrong-${i}`, i)).status);
    expect(statuses).toEqual([401, 401, 401, 429, 429, 429, 429, 429]);
    expect((await post('victim-password-1', 99)).status).toBe(429);

    // The audit lines name the address the proxy saw, never the forged one.
    const audits = log.lines.filter((l) => l.fields.audit === 'login.failed' || l.fields.audit === 'login.throttled');
    expect(audits).toHaveLength(9);
    expect(new Set(audits.map((l) => l.fields.ip))).toEqual(new Set([ATTACKER]));
    const access = log.lines.filter((l) => l.message === 'request' && l.fields.route !== 'healthz' && l.fields.method === 'POST');
    expect(access.some((l) => l.fields.remote_address === ATTACKER)).toBe(true);
    expect(access.filter((l) => String(l.fields.remote_address).startsWith('198.51.100.'))).toEqual([]);
  });

  it('the DCR rate limit (3 per address) holds against a rotating prefix', async () => {
    const before = log.lines.length;
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await send(`${proxy.url}/reg`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': `198.51.100.${i}` },
        body: JSON.stringify({ redirect_uris: ['http://127.0.0.1/cb'], token_endpoint_auth_method: 'none' }),
      });
      statuses.push(res.status);
    }
    // registerClient in the test above registered once, directly from 127.0.0.1 (its own count).
    expect(statuses).toEqual([201, 201, 201, 429, 429, 429]);
    const limited = log.lines.slice(before).filter((l) => l.message === 'rate limit exceeded');
    expect(new Set(limited.map((l) => l.fields.address))).toEqual(new Set([ATTACKER]));
  });
});

describe('trustProxy values the AS refuses (no "trust every hop")', () => {
  it.each([['yes'], [-1], [1.5], [[]], [['10.0.0.0/33']], [['not-an-address']]])(
    'trustProxy %j is a configuration error',
    async (value) => {
      await expect(startAttackStack({ authorizationServer: { trustProxy: value as never } })).rejects.toThrow(/trustProxy/);
    },
  );
});

/**
 * The scan: outside `client-address.ts`, no source of the authorization server (or its app)
 * reads the client address itself. A new `req.ip` in a limiter would reopen finding 3.
 */
describe('one derivation of the client address', () => {
  const ROOT = join(import.meta.dirname, '..', '..');
  const DIRS = ['packages/authorization-server/src', 'apps/auth-server/src'];
  const ALLOWED = 'packages/authorization-server/src/http/client-address.ts';
  const sources = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? sources(path) : path.endsWith('.ts') ? [path] : [];
    });
  const files = DIRS.flatMap((d) => sources(join(ROOT, d))).map((p) => ({ path: relative(ROOT, p), text: readFileSync(p, 'utf8') }));
  // Header names in quotes (code), not in comments' backticks; `headers.forwarded` is RFC 7239's `for=`.
  const READS =
    /\breq(?:uest)?\.ips?\b|\bctx\.(?:request\.)?ips?\b|socket\.remoteAddress|['"]x-forwarded-for['"]|headers\.forwarded\b|\[['"]forwarded['"]\]/i;

  it('the scan sees the sources and the one reader', () => {
    expect(files.length).toBeGreaterThan(50);
    expect(READS.test(files.find((f) => f.path === ALLOWED)!.text)).toBe(true);
  });

  it('no other source reads req.ip / req.ips / socket.remoteAddress / X-Forwarded-For', () => {
    expect(files.filter((f) => f.path !== ALLOWED && READS.test(f.text)).map((f) => f.path)).toEqual([]);
  });
});
