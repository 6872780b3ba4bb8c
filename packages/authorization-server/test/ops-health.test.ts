/** Liveness (/healthz) and readiness (/readyz, store included) probes. */
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../src/storage/index.js';
import { startAs } from './helpers/as.js';
import { dropSchema, randomSchema, TEST_DATABASE_URL } from './storage/pg-helpers.js';

async function probe(base: string, path: string) {
  const res = await fetch(`${base}${path}`);
  return { status: res.status, cache: res.headers.get('cache-control'), body: (await res.json()) as Record<string, unknown> };
}

/** A loopback TCP relay to PostgreSQL that the test can cut, as a database outage would. */
async function relay(target: { host: string; port: number }): Promise<{ port: number; cut(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(target.port, target.host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => sockets.delete(s));
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    async cut() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

describe('health probes', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => {});
  });

  it('/healthz is liveness (200 without touching the store); /readyz checks the store', async () => {
    const t = await startAs();
    cleanups.push(() => t.close());
    expect(await probe(t.url, '/healthz')).toEqual({ status: 200, cache: 'no-store', body: { status: 'ok' } });
    expect(await probe(t.url, '/readyz')).toEqual({ status: 200, cache: 'no-store', body: { status: 'ok', checks: { store: 'ok' } } });
  });

  it('readiness fails (503) when the store is closed, while liveness stays 200', async () => {
    const store = await openStore({ kind: 'memory' });
    const t = await startAs({ storage: store });
    cleanups.push(() => t.close());
    await store.close();
    expect(await probe(t.url, '/readyz')).toMatchObject({ status: 503, body: { status: 'unavailable', checks: { store: 'down' } } });
    expect((await probe(t.url, '/healthz')).status).toBe(200);
  });

  it('readiness fails (503) when PostgreSQL becomes unreachable, and recovers when it is back', async () => {
    const pgUrl = new URL(TEST_DATABASE_URL);
    const link = await relay({ host: pgUrl.hostname, port: Number(pgUrl.port || 5432) });
    const viaRelay = new URL(TEST_DATABASE_URL);
    viaRelay.port = String(link.port);
    const schema = randomSchema('ops_health');
    const store = await openStore({ kind: 'postgres', url: viaRelay.href, schema });
    const t = await startAs({ storage: store, readinessTimeoutMs: 1500 });
    cleanups.push(async () => {
      await t.close();
      await store.close();
      await dropSchema(schema);
    });
    expect((await probe(t.url, '/readyz')).status).toBe(200);
    await link.cut();
    expect(await probe(t.url, '/readyz')).toMatchObject({ status: 503, body: { checks: { store: 'down' } } });
    expect((await probe(t.url, '/healthz')).status).toBe(200);
  });

  it('a draining instance answers 503 on /readyz so balancers stop sending it traffic', async () => {
    const t = await startAs();
    cleanups.push(() => t.close());
    t.as.drain();
    expect(await probe(t.url, '/readyz')).toMatchObject({ status: 503, body: { status: 'draining' } });
    expect((await probe(t.url, '/healthz')).status).toBe(200);
  });
});
