import { describe, expect, it } from 'vitest';
import type { Logger } from '../src/ops/logger.js';
import { redact } from '../src/ops/logger.js';
import { registerClient, tokenRequest, type RunningAs } from './helpers/as.js';
import { authorizeAuto, exchangeCode } from './helpers/flow.js';
import { startAsForDescribe } from './helpers/for-describe.js';

describe('errors and logs never leak secrets or stacks', () => {
  let t: RunningAs;
  const lines: string[] = [];
  const logger: Logger = {
    info: (m, f) => lines.push(`${m} ${JSON.stringify(redact(f))}`),
    warn: (m, f) => lines.push(`${m} ${JSON.stringify(redact(f))}`),
    error: (m, f) => lines.push(`${m} ${JSON.stringify(redact(f))}`),
  };
  startAsForDescribe({ devAutoLogin: 'alice', logger }, (started) => (t = started));

  it('redact() replaces secret-looking fields', () => {
    expect(redact({ refresh_token: 'abc', password: 'p', client_id: 'c' })).toEqual({
      refresh_token: '[redacted]',
      password: '[redacted]',
      client_id: 'c',
    });
  });

  it('a full flow plus failed token requests leave no code, token or secret in the logs', async () => {
    const reg = await registerClient(t.url);
    const flow = await authorizeAuto(t.url, reg.body.client_id);
    const code = flow.callback.searchParams.get('code')!;
    const ok = await exchangeCode(t.url, reg.body.client_id, flow);
    expect(ok.status).toBe(200);
    const replay = await exchangeCode(t.url, reg.body.client_id, flow);
    expect(replay.status).toBe(400);
    const badRefresh = await tokenRequest(t.url, {
      grant_type: 'refresh_token',
      refresh_token: 'forged-refresh-token-value',
      client_id: reg.body.client_id,
    });
    expect(badRefresh.status).toBe(400);
    const all = lines.join('\n');
    // The refusals are logged with their OAuth error code…
    expect(all).toMatch(/request refused .*"event":"grant.error".*"error":"invalid_grant"/);
    for (const secret of [
      code,
      ok.body.access_token,
      ok.body.refresh_token,
      flow.verifier,
      'forged-refresh-token-value',
      reg.body.registration_access_token,
    ]) {
      expect(all).not.toContain(secret);
    }
  });

  it('OAuth error responses are JSON with a registered code and no stack', async () => {
    const cases: Array<[string, RequestInit]> = [
      [
        '/token',
        {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: 'grant_type=authorization_code&code=%ZZ',
        },
      ],
      ['/token', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"grant_type":' }],
      ['/token', { method: 'POST' }],
      [
        '/reg',
        { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ redirect_uris: 'not-an-array' }) },
      ],
    ];
    for (const [path, init] of cases) {
      const res = await fetch(`${t.url}${path}`, init);
      const text = await res.text();
      expect(res.status, `${path} ${text}`).toBeGreaterThanOrEqual(400);
      expect(res.status, `${path} ${text}`).toBeLessThan(500);
      const body = JSON.parse(text) as { error: string };
      expect([
        'invalid_request',
        'invalid_client',
        'invalid_client_metadata',
        'unsupported_grant_type',
        'invalid_grant',
        'invalid_redirect_uri',
      ]).toContain(body.error);
      expect(text).not.toMatch(/at .*\.(js|ts):\d+/);
    }
  });

  it('baseline security headers on API responses and a strict CSP on the error page', async () => {
    const meta = await fetch(`${t.url}/.well-known/oauth-authorization-server`);
    expect(meta.headers.get('x-content-type-options')).toBe('nosniff');
    expect(meta.headers.get('x-powered-by')).toBeNull();
    const page = await fetch(`${t.url}/auth?client_id=unknown-client&response_type=code`);
    expect(page.status).toBe(400);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(await page.text()).not.toMatch(/at .*\.js:\d+/);
  });

  it('GET /healthz answers 200 while the store answers', async () => {
    const res = await fetch(`${t.url}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
  });

  it('RFC 6749 §5.1: token responses are not cacheable', async () => {
    const reg = await registerClient(t.url);
    const flow = await authorizeAuto(t.url, reg.body.client_id);
    const res = await exchangeCode(t.url, reg.body.client_id, flow);
    expect(res.headers.get('cache-control')).toBe('no-store');
  });
});
