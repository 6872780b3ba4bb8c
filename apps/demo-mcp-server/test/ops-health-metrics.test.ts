/** Demo server operations: liveness, readiness (authorization server reachable, draining), metrics. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDemoServer, type DemoServer } from '../src/index.js';
import { startFakeAuthorizationServer, type FakeAuthorizationServer } from './helpers/fake-as.js';
import { bearer, post } from './helpers/mcp-wire.js';

function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('demo MCP server: health and metrics', () => {
  let as: FakeAuthorizationServer;
  let demo: DemoServer;
  let base: string;
  beforeAll(async () => {
    as = await startFakeAuthorizationServer();
    demo = await startDemoServer({ port: 0, host: '127.0.0.1', issuer: as.issuer, metrics: true });
    base = new URL(demo.url).origin;
  });
  afterAll(async () => {
    await demo?.close();
    await as?.close();
  });

  it('/healthz is liveness; /readyz is ready while the authorization server answers', async () => {
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ok', checks: { authorization_server: 'ok' } });
  });

  it('token validations are counted by outcome and refusal reason (resource-server onValidation hook)', async () => {
    const list = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} };
    const good = await as.sign({ aud: demo.resource, scope: 'notes:read' });
    const wrongAudience = await as.sign({ aud: 'http://127.0.0.1:1/other', scope: 'notes:read' });
    await post(demo.url, list, { 'mcp-protocol-version': '2026-07-28', ...bearer(good) });
    await post(demo.url, list, { 'mcp-protocol-version': '2026-07-28' });
    await post(demo.url, list, { 'mcp-protocol-version': '2026-07-28', ...bearer(wrongAudience) });
    const res = await fetch(`${base}/metrics`);
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(sample(text, 'mcp_resource_token_validations_total{outcome="ok",reason=""}')).toBe(1);
    expect(sample(text, 'mcp_resource_token_validations_total{outcome="refused",reason="missing_credentials"}')).toBe(1);
    expect(sample(text, 'mcp_resource_token_validations_total{outcome="refused",reason="aud_mismatch"}')).toBe(1);
    expect(text).toContain('mcp_resource_http_request_duration_seconds_bucket');
    expect(text).not.toContain(good);
  });

  it('/readyz answers 503 when the authorization server is gone', async () => {
    const lonely = await startDemoServer({ port: 0, host: '127.0.0.1', issuer: 'http://127.0.0.1:1' });
    try {
      const res = await fetch(`${new URL(lonely.url).origin}/readyz`);
      expect(res.status).toBe(503);
      expect(await res.json()).toMatchObject({ checks: { authorization_server: 'down' } });
      expect((await fetch(`${new URL(lonely.url).origin}/metrics`)).status).toBe(404);
    } finally {
      await lonely.close();
    }
  });
});
