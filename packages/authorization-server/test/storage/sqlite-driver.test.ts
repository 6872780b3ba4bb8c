/**
 * Which SQLite driver the store uses: node:sqlite when this Node has it, else better-sqlite3;
 * a forced driver that cannot load says what is needed. Both drivers read each other's files.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/storage/index.js';
import { openSqliteDriver } from '../../src/storage/sqlite/driver.js';
import { scratchDir } from './scratch-dir.js';
import { NODE_HAS_SQLITE, SQLITE_DRIVERS } from './sqlite-drivers.js';

const dir = scratchDir('sqlite-driver');
const [nodeCase, betterCase] = SQLITE_DRIVERS as [(typeof SQLITE_DRIVERS)[0], (typeof SQLITE_DRIVERS)[0]];

describe('SQLite driver choice', () => {
  it.skipIf(!NODE_HAS_SQLITE && betterCase.skip !== undefined)(
    `default: node:sqlite on Node ≥ 22.13, else better-sqlite3 (this is ${process.version})`,
    async () => {
      const expected = NODE_HAS_SQLITE ? 'node' : 'better-sqlite3';
      const db = await openSqliteDriver(join(dir, 'default.sqlite'));
      db.close();
      expect(db.name).toBe(expected);
    },
  );

  it.skipIf(NODE_HAS_SQLITE)('forcing the node driver on Node < 22.13 names the Node.js version it needs', async () => {
    await expect(openStore({ kind: 'sqlite', file: join(dir, 'never.sqlite'), driver: 'node' })).rejects.toMatchObject({
      name: 'StorageError',
      code: 'unavailable',
      message: expect.stringContaining('Node.js 22.13'),
    });
  });

  it('an unknown driver is a configuration error', async () => {
    await expect(openStore({ kind: 'sqlite', file: join(dir, 'never.sqlite'), driver: 'sqlite3' as never })).rejects.toMatchObject({
      name: 'StorageError',
      code: 'misconfigured',
    });
  });

  it.skipIf(nodeCase.skip !== undefined || betterCase.skip !== undefined)(
    'a file written by one driver is read by the other (same schema, same stored values)',
    async () => {
      const file = join(dir, 'shared.sqlite');
      const first = await openStore({ kind: 'sqlite', file, driver: 'better-sqlite3' }, { cleanupIntervalSeconds: 0 });
      await first.accounts.create({
        id: 'a1',
        username: 'alice',
        passwordHash: null,
        disabled: false,
        upstreamIdentities: ['https://idp.example sub'],
      });
      await first.kv.increment('limits', 'k', 2, 60);
      const keys = await first.keys.signingKeys();
      expect(keys.length).toBeGreaterThan(0);
      await first.close();
      const second = await openStore({ kind: 'sqlite', file, driver: 'node' }, { cleanupIntervalSeconds: 0 });
      try {
        expect(await second.accounts.findByUpstreamIdentity('https://idp.example', 'sub')).toMatchObject({ id: 'a1', username: 'alice' });
        expect(await second.kv.increment('limits', 'k', 1, 60)).toBe(3);
        expect((await second.keys.signingKeys()).map((k) => k.jwk.kid)).toEqual(keys.map((k) => k.jwk.kid));
      } finally {
        await second.close();
      }
    },
  );

  // Node 22 and 23 print "ExperimentalWarning: SQLite is an experimental feature" when
  // node:sqlite first loads; the AS must not add that line to every start and test run.
  it.skipIf(nodeCase.skip !== undefined)('opening the store on node:sqlite prints no ExperimentalWarning', async () => {
    const script = `
      const { openStore } = await import(${JSON.stringify(new URL('../../dist/storage/index.js', import.meta.url).href)});
      const store = await openStore({ kind: 'sqlite', file: ${JSON.stringify(join(dir, 'warning.sqlite'))}, driver: 'node' }, { cleanupIntervalSeconds: 0 });
      await store.kv.set('ns', 'k', 1, 60);
      await store.close();
      process.emitWarning('a later warning still shows');
      console.log('opened');`;
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script]);
    expect(stdout.trim()).toBe('opened');
    expect(stderr).not.toMatch(/ExperimentalWarning|SQLite is an experimental feature/);
    expect(stderr).toMatch(/a later warning still shows/);
  });
});
