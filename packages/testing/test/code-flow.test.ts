/**
 * The headless flow's own defences, tried against a malicious authorization server (the
 * attacker is outside the kit): it must refuse mixed-up or forged responses before any
 * token request.
 */
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HeadlessBrowser, runCodeFlow, startLoopbackServer, type AsEndpoints, type LoopbackServer } from '@mcp-auth-kit/testing';

const REDIRECT = 'http://127.0.0.1/callback';
let server: LoopbackServer;
let endpoints: AsEndpoints;
let tokenRequests = 0;
let answer: (params: URLSearchParams) => Record<string, string>;

beforeAll(async () => {
  server = await startLoopbackServer();
  const app = express();
  app.get('/authorize', (req, res) => {
    const params = new URLSearchParams(req.query as Record<string, string>);
    const target = new URL(String(params.get('redirect_uri')));
    for (const [k, v] of Object.entries(answer(params))) target.searchParams.set(k, v);
    res.redirect(303, target.href);
  });
  app.post('/token', (_req, res) => {
    tokenRequests++;
    res.json({ access_token: 'x', token_type: 'Bearer' });
  });
  // Cookie paths: /a/set sets one cookie for /a only and one for the whole host.
  app.get('/a/set', (_req, res) => {
    res.append('set-cookie', 'scoped=1; Path=/a; HttpOnly');
    res.append('set-cookie', 'site=2; Path=/; HttpOnly');
    res.json({});
  });
  app.get(['/a/echo', '/b/echo'], (req, res) => res.json({ cookie: req.headers.cookie ?? '' }));
  server.handle(app);
  endpoints = {
    issuer: server.origin,
    authorization_endpoint: `${server.origin}/authorize`,
    token_endpoint: `${server.origin}/token`,
    jwks_uri: `${server.origin}/jwks`,
  };
});
afterAll(() => server?.close());

const flow = () => runCodeFlow({ endpoints, clientId: 'c', redirectUri: REDIRECT, scope: 's', resource: 'http://127.0.0.1:1/mcp' });

describe('runCodeFlow against a malicious AS', () => {
  it('RFC 9207 §2.4: a response whose iss is another issuer is refused (mix-up), no token request', async () => {
    tokenRequests = 0;
    answer = (p) => ({ code: 'c', state: p.get('state')!, iss: 'https://attacker.example' });
    await expect(flow()).rejects.toThrow(/iss does not match/);
    expect(tokenRequests).toBe(0);
  });

  it('RFC 9207: a response without iss is refused (the AS must send it)', async () => {
    tokenRequests = 0;
    answer = (p) => ({ code: 'c', state: p.get('state')! });
    await expect(flow()).rejects.toThrow(/iss does not match/);
    expect(tokenRequests).toBe(0);
  });

  it('OAuth 2.1 §7.5.1 (CSRF): a response with another state is refused', async () => {
    tokenRequests = 0;
    answer = () => ({ code: 'c', state: 'forged', iss: endpoints.issuer });
    await expect(flow()).rejects.toThrow(/state mismatch/);
    expect(tokenRequests).toBe(0);
  });

  it('an error response surfaces its error code', async () => {
    answer = (p) => ({ error: 'access_denied', state: p.get('state')!, iss: endpoints.issuer });
    await expect(flow()).rejects.toMatchObject({ error: 'access_denied' });
  });

  it('OAuth 2.1 §4.1.1: the request carries S256 PKCE, state and resource; a good response reaches the token endpoint', async () => {
    let seen: URLSearchParams | undefined;
    tokenRequests = 0;
    answer = (p) => {
      seen = p;
      return { code: 'c', state: p.get('state')!, iss: endpoints.issuer };
    };
    await expect(flow()).resolves.toMatchObject({ access_token: 'x' });
    expect(tokenRequests).toBe(1);
    expect(seen?.get('code_challenge_method')).toBe('S256');
    expect(seen?.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(seen?.get('resource')).toBe('http://127.0.0.1:1/mcp');
    expect(seen?.get('state')?.length).toBeGreaterThanOrEqual(16);
  });
});

describe('HeadlessBrowser cookie jar', () => {
  it('RFC 6265 §5.1.4: a cookie is only sent under its Path', async () => {
    const browser = new HeadlessBrowser();
    await browser.request(`${server.origin}/a/set`);
    expect(JSON.parse((await browser.request(`${server.origin}/a/echo`)).body).cookie).toBe('scoped=1; site=2');
    expect(JSON.parse((await browser.request(`${server.origin}/b/echo`)).body).cookie).toBe('site=2');
  });
});
