import { join } from 'node:path';
import { afterAll, describe } from 'vitest';
import { openStore } from '../../src/storage/index.js';
import { storeContract } from './contract.js';
import { dropSchema, randomSchema, TEST_DATABASE_URL } from './pg-helpers.js';
import { scratchDir } from './scratch-dir.js';
import { caseName, SQLITE_DRIVERS } from './sqlite-drivers.js';

storeContract({
  name: 'memory',
  durable: false,
  open: (options) => openStore({ kind: 'memory' }, options),
  reset: async () => {},
});

const sqliteDir = scratchDir('storage');
let sqliteFile = '';
let sqliteRun = 0;

for (const sqlite of SQLITE_DRIVERS) {
  describe.skipIf(sqlite.skip !== undefined)(caseName(sqlite), () => {
    storeContract({
      name: sqlite.label,
      durable: true,
      open: (options) => openStore({ kind: 'sqlite', file: sqliteFile, driver: sqlite.driver }, options),
      // A fresh database file (in a not-yet-existing sub-folder) for every test.
      reset: async () => {
        sqliteRun++;
        sqliteFile = join(sqliteDir, `run-${sqliteRun}`, 'nested', 'auth.sqlite');
      },
    });
  });
}

const pgSchema = randomSchema();
afterAll(() => dropSchema(pgSchema));

storeContract({
  name: 'postgres',
  durable: true,
  open: (options) => openStore({ kind: 'postgres', url: TEST_DATABASE_URL, schema: pgSchema }, options),
  // Dropping the schema also re-runs the migrations on the next open.
  reset: () => dropSchema(pgSchema),
});
