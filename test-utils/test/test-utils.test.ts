import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  HeadlessBrowser,
  freePort,
  isListening,
  isUrl,
  matchesRedirectUri,
  pkcePair,
  redisAnswers,
  respeltSignature,
} from '../src/index.js';

/** A tiny "authorization server": path-scoped cookies, a redirect chain, a form with a CSRF field. */
let server: Server;
let base: string;
const seen: { path: string; cookie: string | undefined; body: string }[] = [];
beforeAll(async () => {
  server = createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    const url = new URL(req.url ?? '/', base);
    seen.push({ path: url.pathname, cookie: req.headers.cookie, body });
    if (url.pathname === '/auth') {
      res.setHeader('set-cookie', ['interaction=abc; Path=/interaction/1; HttpOnly', 'site=1; Path=/']);
      res.writeHead(303, { location: '/interaction/1' }).end();
    } else if (url.pathname === '/interaction/1' && req.method === 'GET') {
      res.end(
        '<form method="post" action="/interaction/1?x=1&amp;y=2"><input type="hidden" name="csrf" value="t&quot;k"><input name="user"></form>',
      );
    } else if (url.pathname === '/interaction/1') {
      res.setHeader('set-cookie', 'site=; Path=/; Max-Age=0');
      res.writeHead(303, { location: 'http://127.0.0.1:1/callback?code=c1' }).end();
    } else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('HeadlessBrowser', () => {
  it('keeps path-scoped cookies, submits the form with its hidden fields, stops at the redirect URI', async () => {
    seen.length = 0;
    const browser = new HeadlessBrowser({ headers: { 'x-test': '1' } });
    const page = await browser.follow(`${base}/auth`, 'http://127.0.0.1:1/callback');
    if (isUrl(page)) throw new Error('expected the form');
    expect(seen.map((s) => [s.path, s.cookie])).toEqual([
      ['/auth', undefined],
      ['/interaction/1', 'interaction=abc; site=1'],
    ]);
    expect(browser.cookies.map((c) => c.name).sort()).toEqual(['interaction', 'site']);
    expect(await browser.cookieHeader(`${base}/other`)).toBe('site=1');

    const end = await browser.submit(page, { user: 'alice' }, matchesRedirectUri('http://127.0.0.1:1/callback'));
    expect(isUrl(end) && end.searchParams.get('code')).toBe('c1');
    expect(new URLSearchParams(seen.at(-1)!.body).get('csrf')).toBe('t"k');
    expect(seen.at(-1)!.path).toBe('/interaction/1');
    // Max-Age=0 removed the site cookie: a real jar, not a list of Set-Cookie lines.
    expect(browser.cookies.map((c) => c.name)).toEqual(['interaction']);
    expect(browser.history.map((h) => h.status)).toEqual([303, 200, 303]);
  });

  it('followToCallback returns the redirect URI, and throws with the page when a form is in the way', async () => {
    const browser = new HeadlessBrowser();
    await expect(browser.followToCallback(`${base}/auth`, matchesRedirectUri('http://127.0.0.1:1/callback'))).rejects.toThrow(
      /stopped at http:\/\/127\.0\.0\.1:\d+\/interaction\/1 with HTTP 200/,
    );
    await browser.removeCookies((c) => c.name === 'interaction');
    expect(browser.cookies.map((c) => c.name)).toEqual(['site']);
  });
});

describe('pkcePair (RFC 7636 §4.1, §4.2)', () => {
  it('a 43-character verifier and its S256 challenge', () => {
    const { verifier, challenge } = pkcePair();
    expect(verifier).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(challenge).toBe(createHash('sha256').update(verifier).digest('base64url'));
  });
});

describe('freePort', () => {
  it('a loopback port below the ephemeral range that nothing listens on', async () => {
    const port = await freePort();
    expect(port).toBeGreaterThanOrEqual(20_000);
    expect(port).toBeLessThan(32_000);
    expect(await isListening(port)).toBe(false);
  });
});

describe('redisAnswers', () => {
  const tcpServer = async (onData: (socket: Socket) => void): Promise<{ url: string; close(): Promise<void> }> => {
    const srv = createTcpServer((socket) => socket.on('data', () => onData(socket)));
    await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
    const { port } = srv.address() as AddressInfo;
    return {
      url: `redis://127.0.0.1:${port}`,
      close: () => new Promise<void>((resolve) => srv.close(() => resolve())),
    };
  };

  it('true for a server answering PING with +PONG; false for one answering something else', async () => {
    const pong = await tcpServer((socket) => socket.write('+PONG\r\n'));
    const other = await tcpServer((socket) => socket.write('-ERR unknown command\r\n'));
    expect(await redisAnswers(pong.url)).toBe(true);
    expect(await redisAnswers(other.url)).toBe(false);
    await pong.close();
    await other.close();
  });

  it('false when nothing listens, and when the server stays silent past the timeout', async () => {
    expect(await redisAnswers(`redis://127.0.0.1:${await freePort()}`)).toBe(false);
    const silent = await tcpServer(() => {});
    const started = Date.now();
    expect(await redisAnswers(silent.url, 200)).toBe(false);
    expect(Date.now() - started).toBeLessThan(2000);
    await silent.close();
  });
});

describe('respeltSignature', () => {
  it('spells the same signature bytes another way', () => {
    const signature = Buffer.alloc(64, 0x5a).toString('base64url');
    const token = `aGVhZA.Ym9keQ.${signature}`;
    const respelt = respeltSignature(token);
    const [, , other] = respelt.split('.');
    expect(respelt.startsWith('aGVhZA.Ym9keQ.')).toBe(true);
    expect(other).not.toBe(signature);
    expect(Buffer.from(other!, 'base64url').equals(Buffer.from(signature, 'base64url'))).toBe(true);
    expect(() => respeltSignature(`a.b.${Buffer.alloc(3).toString('base64url')}`)).toThrow(/no unused bits/);
  });
});
