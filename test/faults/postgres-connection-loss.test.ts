import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  authorizeCode,
  callWhoami,
  fullFlow,
  pkcePair,
  postJson,
  refresh,
  registerClient,
  startAttackStack,
  type AttackStack,
} from '../security/helpers/support.js';
import { openPgScope, shouldRunPgTests, type PgScope } from './helpers/postgres.js';

/**
 * "PostgreSQL restarted during a flow", simulated without touching the shared server: every
 * backend connection of THIS AS's pool (identified by its own application_name) is terminated
 * with pg_terminate_backend — what the AS sees when the database restarts. The AS must
 * recover on its own, and nothing it acknowledged (registrations, grants, refresh tokens,
 * signing keys) may be lost.
 */
const available = await shouldRunPgTests();

describe.skipIf(!available)('fault: PostgreSQL connections dropped under the AS', () => {
  let scope: PgScope;
  let stack: AttackStack;

  beforeAll(async () => {
    scope = await openPgScope('fault_pg');
    stack = await startAttackStack({ storage: { kind: 'postgres', url: scope.url, schema: scope.schema } });
  });
  afterAll(async () => {
    await stack?.close();
    await scope?.drop();
  });

  it('acknowledged registrations, grants and refresh tokens survive; the AS recovers without a restart', async () => {
    const clientId = await registerClient(stack);
    const before = await fullFlow(stack, clientId);
    expect(await scope.connections()).toBeGreaterThan(0);

    const killed = await scope.terminate();
    expect(killed).toBeGreaterThan(0);

    // The pool replaces dropped connections; give the AS a few attempts at most (a request
    // that was using a dying connection may fail once, but must fail cleanly).
    let rotated: Awaited<ReturnType<typeof refresh>> | undefined;
    for (let attempt = 0; attempt < 3; attempt++) {
      rotated = await refresh(stack, clientId, before.refresh_token!);
      if (rotated.status === 200) break;
      expect(rotated.status, rotated.text).toBeGreaterThanOrEqual(500);
      expect(rotated.text).not.toMatch(/\bat \S+ \(|postgres:\/\//);
    }
    expect(rotated!.status, rotated!.text).toBe(200);
    console.log(`pg fault: ${killed} backend(s) terminated; refresh after the drop answered ${rotated!.status}`);

    // The registered client is still known: a new flow with it works.
    const after = await fullFlow(stack, clientId);
    expect((await callWhoami(stack.mcpUrl, after.access_token)).status).toBe(200);
    // Tokens issued before the drop are still valid (signing keys were not regenerated).
    expect((await callWhoami(stack.mcpUrl, before.access_token)).status).toBe(200);
  });

  it('connections dropped in the middle of concurrent flows: every flow completes or fails cleanly, retries succeed, health recovers', async () => {
    const clientId = await registerClient(stack);
    // Drops while the flows are in their front-channel / token legs.
    let drops = 0;
    const dropper = (async () => {
      for (const delay of [20, 60, 120]) {
        await new Promise((r) => setTimeout(r, delay));
        drops += await scope.terminate();
      }
    })();
    const flows = Array.from({ length: 12 }, async (_, i) => {
      await new Promise((r) => setTimeout(r, i * 10));
      try {
        return { ok: true as const, tokens: await fullFlow(stack, clientId) };
      } catch (error) {
        return { ok: false as const, message: (error as Error).message };
      }
    });
    const results = await Promise.all(flows);
    await dropper;
    expect(drops).toBeGreaterThan(0);
    console.log(
      `pg fault: ${drops} backend(s) terminated mid-flow; ${results.filter((r) => !r.ok).length} of ${results.length} concurrent flows failed while connections were dropped`,
    );
    for (const r of results) {
      if (!r.ok)
        console.log(
          `pg fault: flow failed: ${r.message.slice(0, 60)} … ${r.message
            .replace(/<[^>]+>/g, ' ')
            .replace(/\s+/g, ' ')
            .slice(-160)}`,
        );
      if (!r.ok) expect(r.message).not.toMatch(/\bat \S+ \(|postgres:\/\//);
    }
    // Whatever failed is retried once and succeeds; whatever succeeded is usable.
    for (const r of results) {
      const tokens = r.ok ? r.tokens : await fullFlow(stack, clientId);
      const res = await refresh(stack, clientId, tokens.refresh_token!);
      expect(res.status, res.text).toBe(200);
    }
    // Registrations acknowledged (201) while connections were dropping are all still there.
    let dropped = 0;
    const registering = (async () => {
      for (const delay of [5, 25, 50]) {
        await new Promise((r) => setTimeout(r, delay));
        dropped += await scope.terminate();
      }
    })();
    const registrations = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        await new Promise((r) => setTimeout(r, i * 4));
        return postJson(stack.metadata.registration_endpoint, {
          client_name: `during drop ${i}`,
          redirect_uris: ['http://127.0.0.1/callback'],
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          token_endpoint_auth_method: 'none',
        });
      }),
    );
    await registering;
    const acknowledged = registrations.filter((r) => r.status === 201).map((r) => r.body.client_id as string);
    for (const r of registrations) if (r.status !== 201) expect(r.status, r.text).toBeGreaterThanOrEqual(500);
    console.log(`pg fault: ${dropped} backend(s) terminated during registrations; ${acknowledged.length} of 20 acknowledged`);
    expect(acknowledged.length).toBeGreaterThan(0);
    for (const id of acknowledged) {
      const params = await authorizeCode(stack, { clientId: id, challenge: pkcePair().challenge });
      expect(params.get('code'), id).toBeTruthy();
    }
    const health = await fetch(`${stack.issuer}/healthz`);
    expect(health.status).toBe(200);
    await health.arrayBuffer();
  });
});
