/** Prometheus metrics at /metrics after a full flow; one registry per instance. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerClient, startAs, type RunningAs } from './helpers/as.js';
import { authorizeAuto } from './helpers/flow.js';
import { startHttpsHost, type HttpsHost, cimdDocument } from './helpers/https-host.js';
import { runFullFlow } from './helpers/ops-flow.js';
import { openForDescribe } from './helpers/for-describe.js';
import { openStore } from '../src/storage/index.js';
import type { Store } from '../src/storage/types.js';

/** Value of one sample line, e.g. `mcp_auth_tokens_issued_total{grant_type="refresh_token"}`. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

async function scrape(base: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${base}/metrics`, { headers });
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
}

describe('/metrics after a full flow', () => {
  let t: RunningAs;
  let other: RunningAs;
  beforeAll(async () => {
    t = await startAs({ registration: { rateLimit: { max: 2, windowSeconds: 3600 } } });
    other = await startAs();
    await runFullFlow(t.url);
    await registerClient(t.url); // second registration: allowed
    expect((await registerClient(t.url)).status).toBe(429); // third: over the limit
  });
  afterAll(async () => {
    await t?.close();
    await other?.close();
  });

  it('serves the Prometheus text format', async () => {
    const m = await scrape(t.url);
    expect(m.status).toBe(200);
    expect(m.type).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(m.text).toContain('# TYPE mcp_auth_tokens_issued_total counter');
  });

  it('counts authorizations, tokens by grant, OAuth errors by code, rate-limit hits, login failures and latency', async () => {
    const { text } = await scrape(t.url);
    expect(sample(text, 'mcp_auth_authorizations_total{outcome="success"}')).toBe(1);
    expect(sample(text, 'mcp_auth_tokens_issued_total{grant_type="authorization_code"}')).toBe(1);
    expect(sample(text, 'mcp_auth_tokens_issued_total{grant_type="refresh_token"}')).toBe(1);
    expect(sample(text, 'mcp_auth_oauth_errors_total{endpoint="token",error="invalid_grant"}')).toBe(1);
    expect(sample(text, 'mcp_auth_registration_rate_limited_total')).toBe(1);
    expect(sample(text, 'mcp_auth_login_failures_total')).toBe(1);
    expect(sample(text, 'mcp_auth_logins_total{outcome="success"}')).toBe(1);
    expect(sample(text, 'mcp_auth_http_request_duration_seconds_count{method="POST",route="token",status="200"}')).toBe(2);
    expect(sample(text, 'mcp_auth_http_request_duration_seconds_count{method="POST",route="registration",status="429"}')).toBe(1);
  });

  it('each instance has its own registry', async () => {
    const { text } = await scrape(other.url);
    expect(sample(text, 'mcp_auth_tokens_issued_total{grant_type="authorization_code"}')).toBe(0);
    expect(sample(text, 'mcp_auth_registration_rate_limited_total')).toBe(0);
  });
});

describe('/metrics options', () => {
  it('metrics.token requires a bearer token to scrape; metrics.enabled=false removes the endpoint', async () => {
    const guarded = await startAs({ metrics: { token: 'scrape-token-0123456789' } });
    const off = await startAs({ metrics: { enabled: false } });
    try {
      expect((await scrape(guarded.url)).status).toBe(401);
      expect((await scrape(guarded.url, { authorization: 'Bearer wrong-token-0123456789' })).status).toBe(401);
      expect((await scrape(guarded.url, { authorization: 'Bearer scrape-token-0123456789' })).status).toBe(200);
      expect((await scrape(off.url)).status).not.toBe(200);
    } finally {
      await guarded.close();
      await off.close();
    }
  });
});

describe('CIMD fetch metrics (hit / miss / fail / refused)', () => {
  let host: HttpsHost;
  let t: RunningAs;
  let second: RunningAs;
  let store: Store;
  // Vitest runs after-hooks as a stack: the instances close before their store, the store before the host.
  const app = (o: string) => cimdDocument(`${o}/app.json`, { client_name: 'CIMD metrics', grant_types: ['authorization_code'] });
  openForDescribe(
    () => startHttpsHost({ '/app.json': app }),
    (opened) => (host = opened),
  );
  // Two instances on one store: the second finds the document in the shared cache.
  openForDescribe(
    () => openStore({ kind: 'memory' }),
    (opened) => (store = opened),
  );
  const instance = () =>
    startAs({
      devAutoLogin: 'alice',
      storage: store,
      cimd: { allowPrivateNetwork: true, extraCaCertificates: host.caPem, deniedHosts: ['denied.example'] },
    });
  openForDescribe(instance, (opened) => (t = opened));
  openForDescribe(instance, (opened) => (second = opened));

  it('a first use fetches (miss), another instance is served from the shared cache (hit), a missing document fails, a denied host is refused', async () => {
    const clientId = `${host.origin}/app.json`;
    await authorizeAuto(t.url, clientId, { redirect_uri: 'http://127.0.0.1:5555/callback' });
    await authorizeAuto(second.url, clientId, { redirect_uri: 'http://127.0.0.1:5555/callback' });
    expect(host.hits.filter((h) => h === '/app.json')).toHaveLength(1);
    expect(sample((await scrape(second.url)).text, 'mcp_auth_cimd_fetches_total{outcome="hit"}')).toBe(1);
    await fetch(`${t.url}/auth?client_id=${encodeURIComponent(`${host.origin}/missing.json`)}&response_type=code`);
    await fetch(`${t.url}/auth?client_id=${encodeURIComponent('https://denied.example/app.json')}&response_type=code`);
    const { text } = await scrape(t.url);
    expect(sample(text, 'mcp_auth_cimd_fetches_total{outcome="miss"}')).toBe(1);
    // Every failed attempt counts (oidc-provider may look a client up more than once per request).
    const failedAttempts = host.hits.filter((h) => h === '/missing.json').length;
    expect(failedAttempts).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'mcp_auth_cimd_fetches_total{outcome="fail"}')).toBe(failedAttempts);
    expect(sample(text, 'mcp_auth_cimd_fetches_total{outcome="refused"}')).toBeGreaterThanOrEqual(1);
  });
});
