/**
 * A refresh token's rotation (OAuth 2.1 §4.3.1, RFC 9700 §4.14.2): oidc-provider stamps the old
 * token (`consume`) and saves its successor (`upsert`) in one refresh request. On a backend with
 * `rotate` (PostgreSQL; SQLite's is tested in sqlite-commit-group.test.ts) both go as one atomic
 * write (src/storage/adapter.ts): first through the
 * adapter with a recording backend, inside a request context of the shape oidc-provider's
 * `Provider.ctx` gives (the adapter's `currentRequest`); then on PostgreSQL, where a real refresh
 * is pinned by pg-refresh-round-trips.test.ts.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ModelAdapter } from '../../src/storage/adapter.js';
import type { RequestContext } from '../../src/storage/request-context.js';
import type { ModelBackend, ModelRow, Stamp } from '../../src/storage/model-rows.js';
import { PgModels } from '../../src/storage/postgres/models.js';
import { ReadAhead } from '../../src/storage/postgres/read-ahead.js';
import pg from 'pg';
import { pgStoreForSuite, recordStatements, TEST_DATABASE_URL } from './pg-helpers.js';
import { nextTurn } from './turns.js';

/** The request being served, as `Provider.ctx` would give it. */
const requests = new AsyncLocalStorage<RequestContext>();

const refreshContext = () => ({ oidc: { route: 'token', params: { grant_type: 'refresh_token', refresh_token: 'old' } } });
const inRequest = <T>(ctx: RequestContext, run: () => Promise<T>) => requests.run(ctx, run);

/**
 * Records each backend call; `consume` fails with `consumeError` when set; `stamped: false`: the
 * stamp does not take (another request consumed the token first).
 */
function recordingBackend(options: { rotate?: boolean; consumeError?: Error; stamped?: boolean } = {}) {
  const calls: string[] = [];
  const backend: ModelBackend = {
    async upsert(row: ModelRow) {
      calls.push(`upsert ${row.id}`);
    },
    async find() {
      return undefined;
    },
    async findBy() {
      return undefined;
    },
    async list() {
      return [];
    },
    async consume(_model: string, id: string) {
      calls.push(`consume ${id}`);
      if (options.consumeError) throw options.consumeError;
      return options.stamped ?? true;
    },
    async destroy(model: string, id: string) {
      calls.push(`destroy ${model} ${id}`);
    },
    async revokeByGrantId(grantId: string) {
      calls.push(`revoke ${grantId}`);
    },
    ...(options.rotate === false
      ? {}
      : {
          async rotate(stamp: Stamp, row: ModelRow) {
            calls.push(`rotate ${stamp.id} → ${row.id}`);
            return options.stamped ?? true;
          },
        }),
  };
  return {
    calls,
    adapter: new ModelAdapter(
      'RefreshToken',
      backend,
      () => 1_700_000_000_000,
      undefined,
      () => requests.getStore(),
    ),
  };
}

describe('refresh token rotation through the adapter', () => {
  it('consume of the old token, then upsert of its successor in the same turn: one rotate (both writes as one)', async () => {
    const { calls, adapter } = recordingBackend();
    await inRequest(refreshContext(), async () => {
      await adapter.consume('old');
      await adapter.upsert('new', { jti: 'new', grantId: 'g' }, 60);
    });
    expect(calls).toEqual(['rotate old → new']);
  });

  it('no upsert within the turn: the stamp goes alone, and a later upsert of the request is saved after it', async () => {
    const { calls, adapter } = recordingBackend();
    await inRequest(refreshContext(), async () => {
      await adapter.consume('old');
      await nextTurn();
      expect(calls).toEqual(['consume old']);
      await adapter.upsert('new', { jti: 'new', grantId: 'g' }, 60);
    });
    expect(calls).toEqual(['consume old', 'upsert new']);
  });

  it('a stamp that went alone and failed fails the successor: no new refresh token next to a usable old one', async () => {
    const { calls, adapter } = recordingBackend({ consumeError: new Error('connection lost') });
    await inRequest(refreshContext(), async () => {
      await adapter.consume('old');
      await nextTurn();
      await expect(adapter.upsert('new', { jti: 'new', grantId: 'g' }, 60)).rejects.toThrow('connection lost');
    });
    expect(calls).toEqual(['consume old']);
  });

  it('RFC 9700 §4.14.2: a rotation whose stamp did not take (a concurrent rotation won) fails as invalid_grant', async () => {
    const { calls, adapter } = recordingBackend({ stamped: false });
    await inRequest(refreshContext(), async () => {
      await adapter.consume('old');
      await expect(adapter.upsert('new', { jti: 'new', grantId: 'g' }, 60)).rejects.toMatchObject({ error: 'invalid_grant' });
    });
    // the recording backend finds no row, so there is no grant to revoke here (the contract tests that part)
    expect(calls).toEqual(['rotate old → new']);
  });

  it('RFC 9700 §4.14.2: a stamp that went alone and did not take fails the successor: nothing saved', async () => {
    const { calls, adapter } = recordingBackend({ stamped: false });
    await inRequest(refreshContext(), async () => {
      await adapter.consume('old');
      await nextTurn();
      await expect(adapter.upsert('new', { jti: 'new', grantId: 'g' }, 60)).rejects.toMatchObject({ error: 'invalid_grant' });
    });
    expect(calls).toEqual(['consume old']);
  });

  it('outside a refresh request, or on a backend without rotate, consume stamps at once', async () => {
    const outside = recordingBackend();
    await outside.adapter.consume('old');
    await outside.adapter.upsert('new', { jti: 'new' }, 60);
    const code = recordingBackend();
    await inRequest({ oidc: { route: 'token', params: { grant_type: 'authorization_code' } } }, async () => {
      await code.adapter.consume('old');
      await code.adapter.upsert('new', { jti: 'new' }, 60);
    });
    const plain = recordingBackend({ rotate: false });
    await inRequest(refreshContext(), async () => {
      await plain.adapter.consume('old');
      await plain.adapter.upsert('new', { jti: 'new' }, 60);
    });
    for (const { calls } of [outside, code, plain]) expect(calls).toEqual(['consume old', 'upsert new']);
  });

  it('two refresh requests at once keep their own rotations', async () => {
    const { calls, adapter } = recordingBackend();
    await Promise.all(
      ['a', 'b'].map((name) =>
        inRequest(refreshContext(), async () => {
          await adapter.consume(`old-${name}`);
          await adapter.upsert(`new-${name}`, { jti: `new-${name}` }, 60);
        }),
      ),
    );
    expect(calls.sort()).toEqual(['rotate old-a → new-a', 'rotate old-b → new-b']);
  });
});

describe('refresh token rotation on PostgreSQL (PgModels.rotate)', () => {
  const suite = pgStoreForSuite('rotation');
  const now = Date.now();
  let pool: pg.Pool;
  let models: PgModels;

  beforeAll(() => {
    pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 4 });
    models = new PgModels(pool, `"${suite.schema}"`, new ReadAhead(), new ReadAhead());
  });
  afterAll(async () => {
    await pool?.end();
  });

  const refreshTokens = () => suite.store.adapter('RefreshToken');
  const stamp = (id: string, consumedAt = 1_700_000_000): Stamp => ({ model: 'RefreshToken', id, consumedAt, now });
  const successor = (id: string, grantId = 'g'): ModelRow => ({
    model: 'RefreshToken',
    id,
    payload: { jti: id, kind: 'RefreshToken', grantId },
    grantId,
    uid: null,
    userCode: null,
    expiresAt: now + 600_000,
  });

  it('stamps the old token and saves its successor in one statement', async () => {
    await refreshTokens().upsert('rt-1', { jti: 'rt-1', kind: 'RefreshToken', grantId: 'g' }, 600);
    const { statements, result } = await recordStatements(() => models.rotate(stamp('rt-1'), successor('rt-2')));
    expect(result).toBe(true);
    expect(statements).toHaveLength(1);
    expect((await refreshTokens().find('rt-1'))?.consumed).toBe(1_700_000_000);
    expect(await refreshTokens().find('rt-2')).toEqual({ jti: 'rt-2', kind: 'RefreshToken', grantId: 'g' });
  });

  it('both writes or neither: when the successor cannot be saved, the old token stays unstamped (usable for the retry)', async () => {
    await refreshTokens().upsert('rt-keep', { jti: 'rt-keep', kind: 'RefreshToken', grantId: 'g' }, 600);
    const broken = { ...successor('rt-broken'), expiresAt: 'not a number' as unknown as number };
    await expect(models.rotate(stamp('rt-keep'), broken)).rejects.toThrow();
    expect((await refreshTokens().find('rt-keep'))?.consumed).toBeUndefined();
    expect(await refreshTokens().find('rt-broken')).toBeUndefined();
  });

  it('rotations of one turn go as one statement; a token rotated twice at once keeps its first stamp, the second saves nothing', async () => {
    const ids = Array.from({ length: 8 }, (_, i) => `turn-${i}`);
    for (const id of ids) await refreshTokens().upsert(id, { jti: id, kind: 'RefreshToken', grantId: `g-${id}` }, 600);
    let outcomes: boolean[] = [];
    const { statements } = await recordStatements(async () => {
      outcomes = await Promise.all([
        ...ids.map((id, i) => models.rotate(stamp(id, 1_700_000_100 + i), successor(`${id}-next`, `g-${id}`))),
        models.rotate(stamp('turn-0', 1_800_000_000), successor('turn-0-other', 'g-turn-0')),
      ]);
    });
    // the second rotation of turn-0 waits for the statement that carries the first
    expect(statements).toHaveLength(2);
    expect(outcomes).toEqual([...ids.map(() => true), false]);
    for (const [i, id] of ids.entries()) {
      expect((await refreshTokens().find(id))?.consumed).toBe(1_700_000_100 + i);
      expect((await refreshTokens().find(`${id}-next`))?.grantId).toBe(`g-${id}`);
    }
    expect(await refreshTokens().find('turn-0-other')).toBeUndefined();
  });

  it('a batch whose stamps partly fail saves only the successors of the stamps that took', async () => {
    await refreshTokens().upsert('mix-live', { jti: 'mix-live', kind: 'RefreshToken', grantId: 'g' }, 600);
    await refreshTokens().upsert('mix-used', { jti: 'mix-used', kind: 'RefreshToken', grantId: 'g', consumed: 1 }, 600);
    const outcomes = await Promise.all([
      models.rotate(stamp('mix-live'), successor('mix-live-next')),
      models.rotate(stamp('mix-used'), successor('mix-used-next')),
      models.rotate(stamp('mix-missing'), successor('mix-missing-next')),
    ]);
    expect(outcomes).toEqual([true, false, false]);
    expect((await refreshTokens().find('mix-live-next'))?.jti).toBe('mix-live-next');
    expect(await refreshTokens().find('mix-used-next')).toBeUndefined();
    expect(await refreshTokens().find('mix-missing-next')).toBeUndefined();
  });

  it('a rotation of an expired or missing token saves no successor (the stamp decides)', async () => {
    expect(await models.rotate(stamp('never-stored'), successor('after-missing'))).toBe(false);
    expect(await refreshTokens().find('after-missing')).toBeUndefined();
    expect(await refreshTokens().find('never-stored')).toBeUndefined();
  });
});
