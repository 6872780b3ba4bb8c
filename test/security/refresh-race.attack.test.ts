import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { startAuthServer, type RunningAuthServer } from '@mcp-auth-kit/auth-server';
import { silentLogger, type StorageConfig } from '@mcp-auth-kit/authorization-server';
import { openPgScope, type PgScope } from '../faults/helpers/postgres.js';
import { fullFlow, postForm, refresh, registerClient, startAttackStack, type AttackStack } from './helpers/support.js';

/**
 * Parallel refreshes of one refresh token (review of issue 40, finding 1). Refresh tokens
 * rotate, and a rotated token presented again is reuse (OAuth 2.1 §4.3.1, RFC 9700 §4.14.2):
 * of the concurrent requests exactly one may rotate, the others are treated as reuse, and in
 * strict mode (`refreshTokens.reuseGraceSeconds: 0`) that revokes the grant, the winner's new
 * refresh token included. Before the fix, SQLite and PostgreSQL saved a successor for every
 * request (only the grace window's claim in the key-value store serialised them): several live
 * chains from one token.
 *
 * Every store, and every way the grace window's serialisation is absent: grace 0, and the
 * default window with the key-value store failing (its table renamed away, so the claim errors
 * and the refresh goes on "without it"; the memory store's key-value part cannot fail); on the
 * shared stores also with the requests spread over two AS instances on one database.
 */

const PARALLEL = 6;
const RUNS = 4;

type StoreName = 'memory' | 'sqlite' | 'postgres';

interface Backend {
  storage(): StorageConfig;
  /** Makes the key-value store fail (table gone) until the returned function restores it. */
  breakKv?(): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

const sqliteDir = mkdtempSync(join(tmpdir(), 'refresh-race-'));
afterAll(() => rmSync(sqliteDir, { recursive: true, force: true }));

async function backend(name: StoreName, run: string): Promise<Backend> {
  if (name === 'memory') return { storage: () => ({ kind: 'memory' }), close: async () => {} };
  if (name === 'sqlite') {
    const file = join(sqliteDir, `${run}.sqlite`);
    const alter = (sql: string) => {
      const db = new Database(file);
      try {
        db.pragma('busy_timeout = 5000');
        db.exec(sql);
      } finally {
        db.close();
      }
    };
    return {
      // The test breaks the kv table from a better-sqlite3 connection of its own; the AS uses the
      // same driver so the rename is seen the same way on every Node version (Node 22's node:sqlite
      // driver, the default there, kept failing on its cached kv statements after the table came
      // back: a table renamed under a live connection is the test's tool, not the failure it is about).
      storage: () => ({ kind: 'sqlite', file, driver: 'better-sqlite3' }),
      async breakKv() {
        alter('ALTER TABLE kv RENAME TO kv_gone');
        return async () => alter('ALTER TABLE kv_gone RENAME TO kv');
      },
      close: async () => {},
    };
  }
  const pg: PgScope = await openPgScope('refresh_race');
  const q = `"${pg.schema}"`;
  return {
    storage: () => ({ kind: 'postgres', url: pg.url, schema: pg.schema }),
    async breakKv() {
      await pg.admin.query(`ALTER TABLE ${q}.kv RENAME TO kv_gone`);
      return async () => void (await pg.admin.query(`ALTER TABLE ${q}.kv_gone RENAME TO kv`));
    },
    close: () => pg.drop(),
  };
}

interface Case {
  store: StoreName;
  grace: number;
  kvFails: boolean;
  instances: 1 | 2;
}

const CASES: Case[] = [
  { store: 'memory', grace: 0, kvFails: false, instances: 1 },
  { store: 'sqlite', grace: 0, kvFails: false, instances: 1 },
  { store: 'postgres', grace: 0, kvFails: false, instances: 1 },
  { store: 'sqlite', grace: 10, kvFails: true, instances: 1 },
  { store: 'postgres', grace: 10, kvFails: true, instances: 1 },
  { store: 'sqlite', grace: 0, kvFails: false, instances: 2 },
  { store: 'postgres', grace: 0, kvFails: false, instances: 2 },
];

describe('attack: parallel refreshes of one refresh token make several live chains (OAuth 2.1 §4.3.1, RFC 9700 §4.14.2)', () => {
  it.each(CASES)(
    '$store, reuseGraceSeconds $grace, key-value store failing $kvFails, $instances instance(s): exactly one rotation succeeds and the grant is revoked',
    async ({ store, grace, kvFails, instances }) => {
      const b = await backend(store, `${store}-${grace}-${instances}`);
      let stack: AttackStack | undefined;
      let second: RunningAuthServer | undefined;
      try {
        const authorizationServer = { refreshTokens: { reuseGraceSeconds: grace } };
        stack = await startAttackStack({ storage: b.storage(), authorizationServer });
        if (instances === 2) {
          // the same AS behind a load balancer: same issuer and resource, same database
          second = await startAuthServer({
            port: 0,
            host: '127.0.0.1',
            issuer: stack.issuer,
            resource: stack.mcpUrl,
            storage: b.storage(),
            logger: silentLogger,
            authorizationServer,
          });
        }
        const tokenEndpoints = [stack.metadata.token_endpoint, ...(second ? [`${second.url}/token`] : [])];
        const clientId = await registerClient(stack);
        for (let run = 0; run < RUNS; run++) {
          const tokens = await fullFlow(stack, clientId);
          expect(tokens.refresh_token).toEqual(expect.any(String));
          const restore = kvFails ? await b.breakKv!() : undefined;
          try {
            const answers = await Promise.all(
              Array.from({ length: PARALLEL }, (_, i) =>
                postForm(tokenEndpoints[i % tokenEndpoints.length]!, {
                  grant_type: 'refresh_token',
                  refresh_token: tokens.refresh_token!,
                  client_id: clientId,
                  resource: stack!.mcpUrl,
                }),
              ),
            );
            const won = answers.filter((a) => a.status === 200);
            const statuses = answers.map((a) => a.status).join(' ');
            expect(won, `run ${run}: statuses ${statuses}`).toHaveLength(1);
            for (const lost of answers.filter((a) => a.status !== 200)) {
              expect(lost.status, statuses).toBe(400);
              expect(lost.body.error).toBe('invalid_grant');
            }
            // The losers were reuse: the grant is gone, the winner's new refresh token with it.
            const next = await refresh(stack, clientId, String(won[0]!.body.refresh_token));
            expect(next.status, `run ${run}: the winner's refresh token still works`).toBe(400);
            expect(next.body.error).toBe('invalid_grant');
          } finally {
            await restore?.();
          }
        }
      } finally {
        await second?.close();
        await stack?.close();
        await b.close();
      }
    },
    60_000,
  );
});
