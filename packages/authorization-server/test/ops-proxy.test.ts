/**
 * Behind a proxy: X-Forwarded-* headers are believed only with `trustProxy`. Without it a
 * client cannot change the endpoint URLs, make cookies look TLS-protected, or pick the
 * address the rate limits count.
 */
import { describe, expect, it } from 'vitest';
import { registerClient, type RunningAs } from './helpers/as.js';
import { codeAuthorizeUrl } from './helpers/flow.js';
import { pkcePair } from '@mcp-auth-kit/test-utils';
import { startAsForDescribe } from './helpers/for-describe.js';

const FORWARDED = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'forged.example', 'x-forwarded-for': '203.0.113.7' };

async function metadata(base: string) {
  return (await (await fetch(`${base}/.well-known/oauth-authorization-server`, { headers: FORWARDED })).json()) as Record<string, string>;
}

async function authorizationCookies(base: string): Promise<string[]> {
  const clientId = (await registerClient(base)).body.client_id as string;
  const { challenge } = pkcePair();
  const url = codeAuthorizeUrl(base, challenge, { client_id: clientId });
  const res = await fetch(url, { redirect: 'manual', headers: FORWARDED });
  expect(res.status).toBe(303);
  return res.headers.getSetCookie();
}

describe('X-Forwarded-Proto: https without TRUST_PROXY', () => {
  let t: RunningAs;
  startAsForDescribe({ registration: { rateLimit: { max: 1, windowSeconds: 3600 } } }, (started) => (t = started));

  it('endpoint URLs ignore the forwarded host and scheme', async () => {
    const m = await metadata(t.url);
    expect(m.issuer).toBe(t.url);
    expect(m.authorization_endpoint).toBe(`${t.url}/auth`);
    expect(JSON.stringify(m)).not.toContain('forged.example');
  });

  it('RFC 8414 §3.3: a forged Host header cannot move the endpoints off the issuer', async () => {
    const { request } = await import('node:http');
    const port = Number(new URL(t.url).port);
    const body = await new Promise<string>((resolve, reject) => {
      const req = request(
        { host: '127.0.0.1', port, path: '/.well-known/oauth-authorization-server', headers: { host: 'forged.example' } },
        (res) => {
          let text = '';
          res
            .setEncoding('utf8')
            .on('data', (d: string) => (text += d))
            .on('end', () => resolve(text));
        },
      );
      req.on('error', reject).end();
    });
    const m = JSON.parse(body) as Record<string, string>;
    expect(m.token_endpoint).toBe(`${t.url}/token`);
    expect(body).not.toContain('forged.example');
  });

  it('cookies are not marked Secure over plain http', async () => {
    const cookies = await authorizationCookies(t.url);
    expect(cookies.length).toBeGreaterThan(0);
    for (const c of cookies) expect(c).not.toMatch(/;\s*secure/i);
  });

  it('a forged X-Forwarded-For does not escape the per-address registration limit', async () => {
    // The first registration (above) used the one allowed; another forged address does not help.
    const res = await registerClient(t.url, {}, { 'x-forwarded-for': '198.51.100.9' });
    expect(res.status).toBe(429);
  });
});

describe('X-Forwarded-Proto: https with TRUST_PROXY (https issuer behind a TLS-terminating proxy)', () => {
  let t: RunningAs;
  startAsForDescribe(
    {
      issuer: 'https://auth.example.com',
      trustProxy: true,
      registration: { rateLimit: { max: 1, windowSeconds: 3600 } },
    } as never,
    (started) => (t = started),
  );

  it('endpoint URLs use the forwarded scheme and the issuer stays the configured one', async () => {
    const res = await fetch(`${t.url}/.well-known/oauth-authorization-server`, {
      headers: { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'auth.example.com' },
    });
    const m = (await res.json()) as Record<string, string>;
    expect(m.issuer).toBe('https://auth.example.com');
    expect(m.token_endpoint).toBe('https://auth.example.com/token');
  });

  it('cookies are Secure', async () => {
    const cookies = await authorizationCookies(t.url);
    expect(cookies.length).toBeGreaterThan(0);
    for (const c of cookies) expect(c).toMatch(/;\s*secure/i);
  });

  it('RFC 8414 §3.3: a forged X-Forwarded-Host or Host cannot move the endpoints off the issuer', async () => {
    const forged = await metadata(t.url);
    expect(forged.issuer).toBe('https://auth.example.com');
    for (const [key, value] of Object.entries(forged)) {
      if (key.endsWith('_endpoint') || key === 'jwks_uri') expect(value, key).toMatch(/^https:\/\/auth\.example\.com\//);
    }
  });

  it('the client address comes from X-Forwarded-For (each forwarded client has its own limit)', async () => {
    expect((await registerClient(t.url, {}, { 'x-forwarded-for': '198.51.100.1' })).status).toBe(201);
    expect((await registerClient(t.url, {}, { 'x-forwarded-for': '198.51.100.1' })).status).toBe(429);
    expect((await registerClient(t.url, {}, { 'x-forwarded-for': '198.51.100.2' })).status).toBe(201);
  });
});
