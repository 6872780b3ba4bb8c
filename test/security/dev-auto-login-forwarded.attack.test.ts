import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CookieJar } from 'tough-cookie';
import { authorizationUrl, pkcePair, registerClient, startAttackStack, type AttackStack } from './helpers/support.js';

/**
 * Review 40 (info): DEV_AUTO_LOGIN on an AS bound to 127.0.0.1 still approved requests that came
 * through a forwarder — a tunnel or same-host proxy sends a public `Host` and `X-Forwarded-*`
 * (RFC 7239 `Forwarded`), and the auto-login sent a code to whatever redirect URI the remote
 * caller had registered. The dev-only behaviour is now honoured only for a request whose Host is
 * loopback and which carries no forwarder header; every other request gets the login page.
 */
/** A GET with exactly these headers (fetch would replace `Host` with the URL's). */
function get(url: string, headers: Record<string, string>) {
  return new Promise<{ status: number; location?: string; cookies: string[]; body: string }>((resolve, reject) => {
    const out = request(url, { headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        body += c;
      });
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, location: res.headers.location, cookies: res.headers['set-cookie'] ?? [], body }),
      );
    });
    out.on('error', reject);
    out.end();
  });
}

type Outcome = { kind: 'callback'; url: string } | { kind: 'page'; status: number; body: string };

/** Follows the AS's redirects with `headers` on every request, as a browser behind a tunnel would. */
async function authorize(stack: AttackStack, start: URL, headers: Record<string, string>): Promise<Outcome> {
  const jar = new CookieJar();
  const { origin, port: asPort } = new URL(stack.issuer);
  let url = start.href;
  for (let i = 0; i < 10; i++) {
    const cookie = await jar.getCookieString(url);
    const res = await get(url, { ...headers, ...(cookie && { cookie }) });
    for (const line of res.cookies) await jar.setCookie(line, url);
    const location = res.location;
    if (!location) return { kind: 'page', status: res.status, body: res.body };
    const next = new URL(location, url);
    // The AS builds absolute redirects from the Host it was sent; the jar stays on the issuer's origin.
    if (next.port !== asPort) return { kind: 'callback', url: next.href };
    url = `${origin}${next.pathname}${next.search}`;
  }
  throw new Error('too many redirects');
}

const FORWARDED: Array<[string, Record<string, string>]> = [
  ['a tunnel host', { host: 'dev-box.tunnel.example' }],
  ['X-Forwarded-For', { 'x-forwarded-for': '198.51.100.23' }],
  ['X-Forwarded-Host', { 'x-forwarded-host': 'dev-box.tunnel.example' }],
  ['X-Forwarded-Proto', { 'x-forwarded-proto': 'https' }],
  ['Forwarded (RFC 7239)', { forwarded: 'for=198.51.100.23;proto=https' }],
  ['X-Real-IP', { 'x-real-ip': '198.51.100.23' }],
  ['Via', { via: '1.1 tunnel' }],
  [
    'the review scenario',
    {
      host: 'dev-box.tunnel.example',
      'x-forwarded-for': '198.51.100.23',
      'x-forwarded-host': 'dev-box.tunnel.example',
      'x-forwarded-proto': 'https',
    },
  ],
];

describe('attack: DEV_AUTO_LOGIN through a forwarder', () => {
  let stack: AttackStack;
  beforeAll(async () => {
    stack = await startAttackStack({ devAutoLogin: 'demo' });
  });
  afterAll(() => stack?.close());

  const start = async () => authorizationUrl(stack, { clientId: await registerClient(stack), challenge: pkcePair().challenge });

  it('control: a browser on this machine (loopback Host, no forwarder header) is auto-approved', async () => {
    const port = new URL(stack.issuer).port;
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`]) {
      const out = await authorize(stack, await start(), { host });
      expect(out.kind).toBe('callback');
      if (out.kind === 'callback') expect(new URL(out.url).searchParams.get('code'), out.url).toBeTruthy();
    }
  });

  it.each(FORWARDED)('with %s: the login page, no code', async (_, headers) => {
    const out = await authorize(stack, await start(), headers);
    expect(out).toMatchObject({ kind: 'page', status: 200 });
    if (out.kind === 'page') expect(out.body).toContain('name="password"');
  });
});
