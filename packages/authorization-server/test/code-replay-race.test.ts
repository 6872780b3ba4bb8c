/**
 * A code is single-use (RFC 6749 §4.1.2, OAuth 2.1 §4.1.3, RFC 9700 §4.5.3.1), also when two
 * exchanges of it run at the same moment, on one instance or on two sharing PostgreSQL:
 * oidc-provider checks `consumed` when it reads the code and stamps it later, so the store's
 * conditional `consume` is what lets only one of them through. The loser gets `invalid_grant`
 * and the grant is revoked, so the winner's refresh token dies too.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectOAuthError } from '@mcp-auth-kit/test-utils';
import { registerClient } from './helpers/as.js';
import { authorizeAuto, exchangeCode, refreshWith } from './helpers/flow.js';
import { pairWithClientForDescribe, startInstance, type Instance } from './storage/as-harness.js';
import { dropSchema, randomSchema, TEST_DATABASE_URL } from './storage/pg-helpers.js';
import type { StorageConfig } from '../src/storage/index.js';

type Exchange = Awaited<ReturnType<typeof exchangeCode>>;

/**
 * Forces the race: every `AuthorizationCode.find` (on any of the instances) waits until `n`
 * token requests have read the code, so all of them pass oidc-provider's own `consumed`
 * check before any of them consumes. Without it, in-process stores answer so fast that the
 * requests tend to run one after the other, and the test would prove nothing.
 */
function raceGate(instances: Instance[], n: number) {
  let arrived = 0;
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  const timer = setTimeout(() => open(), 5000);
  const restores = instances.map((instance) => {
    // the public type of `provider` is a subset (oidc-shapes.ts): the model class is reached by cast
    const model = (instance.as().provider as unknown as { AuthorizationCode: { find: (...args: unknown[]) => Promise<unknown> } })
      .AuthorizationCode;
    const own = Object.hasOwn(model, 'find');
    const original = model.find;
    model.find = async function gatedFind(this: unknown, ...args: unknown[]) {
      const found = await original.apply(this, args);
      if (++arrived >= n) open();
      await opened;
      return found;
    };
    return () => {
      if (own) model.find = original;
      else delete (model as { find?: unknown }).find;
    };
  });
  return {
    get arrived() {
      return arrived;
    },
    release() {
      clearTimeout(timer);
      for (const restore of restores) restore();
    },
  };
}

/** Runs the exchanges with every code read held until all of them have read it. */
async function raced(instances: Instance[], exchanges: Array<() => Promise<Exchange>>): Promise<Exchange[]> {
  const gate = raceGate(instances, exchanges.length);
  try {
    const results = await Promise.all(exchanges.map((run) => run()));
    expect(gate.arrived, 'every exchange read the unconsumed code before any consumed it').toBe(exchanges.length);
    return results;
  } finally {
    gate.release();
  }
}

/** Exactly one 200 and one 400 invalid_grant (JSON, no 500); returns the winner. */
function oneWinner(results: Exchange[]): Exchange {
  const statuses = results.map((r) => r.status).sort();
  expect(statuses, JSON.stringify(results.map((r) => r.body))).toEqual([200, 400]);
  const loser = results.find((r) => r.status === 400)!;
  expect(loser.headers.get('content-type')).toMatch(/^application\/json/);
  expect(loser.body.error).toBe('invalid_grant');
  expect(JSON.stringify(loser.body)).not.toMatch(/stack|consumed/i);
  const winner = results.find((r) => r.status === 200)!;
  expect(typeof winner.body.refresh_token).toBe('string');
  return winner;
}

const refresh = (base: string, clientId: string, refreshToken: string) => refreshWith(base, clientId, refreshToken);

const tmp = mkdtempSync(join(tmpdir(), 'code-replay-'));
const pgSchema = randomSchema('code_replay');
const targets: Array<{ name: string; storage: StorageConfig }> = [
  { name: 'memory', storage: { kind: 'memory' } },
  { name: 'sqlite', storage: { kind: 'sqlite', file: join(tmp, 'as.db') } },
  { name: 'postgres', storage: { kind: 'postgres', url: TEST_DATABASE_URL, schema: pgSchema } },
];

afterAll(async () => {
  rmSync(tmp, { recursive: true, force: true });
  await dropSchema(pgSchema);
});

for (const target of targets) {
  describe(`code replay race: ${target.name}`, () => {
    let as: Instance;
    let clientId: string;
    beforeAll(async () => {
      as = await startInstance(target.storage);
      const reg = await registerClient(as.url);
      expect(reg.status).toBe(201);
      clientId = reg.body.client_id as string;
    });
    afterAll(async () => {
      await as?.close();
    });

    it('RFC 6749 §4.1.2: one code exchanged twice at once → exactly one 200, the other 400 invalid_grant', async () => {
      const flow = await authorizeAuto(as.url, clientId);
      oneWinner(await raced([as], [() => exchangeCode(as.url, clientId, flow), () => exchangeCode(as.url, clientId, flow)]));
    });

    it("RFC 6749 §4.1.2: after the replay the grant is revoked — the winner's refresh token is refused", async () => {
      const flow = await authorizeAuto(as.url, clientId);
      const winner = oneWinner(await raced([as], [() => exchangeCode(as.url, clientId, flow), () => exchangeCode(as.url, clientId, flow)]));
      const r = await refresh(as.url, clientId, winner.body.refresh_token as string);
      expectOAuthError(r, 'invalid_grant', 400);
    });

    it('RFC 9700 §4.5.3.1: five exchanges of one code at once → one 200, four invalid_grant', async () => {
      const flow = await authorizeAuto(as.url, clientId);
      const results = await raced(
        [as],
        Array.from({ length: 5 }, () => () => exchangeCode(as.url, clientId, flow)),
      );
      expect(results.filter((r) => r.status === 200)).toHaveLength(1);
      expect(results.filter((r) => r.status === 400).map((r) => r.body.error)).toEqual(Array(4).fill('invalid_grant'));
    });

    it('control: an exchanged code whose replay never came refreshes normally', async () => {
      const flow = await authorizeAuto(as.url, clientId);
      const t = await exchangeCode(as.url, clientId, flow);
      expect(t.status).toBe(200);
      const r = await refresh(as.url, clientId, t.body.refresh_token as string);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
    });
  });
}

describe('code replay race: two AS instances on one PostgreSQL schema', () => {
  let a: Instance;
  let b: Instance;
  let clientId: string;
  pairWithClientForDescribe(randomSchema('code_replay_two'), (pair) => ({ a, b, clientId } = pair));

  it("RFC 6749 §4.1.2: the code exchanged on A and on B at once → one success; the winner's refresh token then fails on both", async () => {
    for (let round = 0; round < 3; round++) {
      const flow = await authorizeAuto(a.url, clientId);
      const winner = oneWinner(await raced([a, b], [() => exchangeCode(a.url, clientId, flow), () => exchangeCode(b.url, clientId, flow)]));
      for (const base of [a.url, b.url]) {
        const r = await refresh(base, clientId, winner.body.refresh_token as string);
        expectOAuthError(r, 'invalid_grant', 400);
      }
    }
  });
});
