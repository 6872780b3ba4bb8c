/**
 * The SQLite tests run once per driver. A driver this Node cannot load is skipped with its
 * reason printed: `node:sqlite` needs Node ≥ 22.13 (`.ci/run` runs the whole suite a second
 * time on Node 22, where it runs), and better-sqlite3 is a native module built for one Node ABI
 * (`.ci/run` rebuilds it for that Node 22 run). In CI a driver that should load never skips.
 */
import { createRequire } from 'node:module';
import { builtinSqlite, type SqliteDriverName } from '../../src/storage/sqlite/driver.js';

const inCi = process.env.CI === 'true' || process.env.CI === '1';
const [major, minor] = process.versions.node.split('.').map(Number) as [number, number];
/** Node ≥ 22.13 (and 23.4+, 24+) loads node:sqlite without a flag. */
export const NODE_HAS_SQLITE = major > 22 || (major === 22 && minor >= 13);

function betterSqliteProblem(): string | undefined {
  try {
    const Database = createRequire(import.meta.url)('better-sqlite3') as new (file: string) => { close(): void };
    new Database(':memory:').close();
    return undefined;
  } catch (error) {
    return String((error as Error).message).split('\n')[0];
  }
}

export interface SqliteDriverCase {
  driver: SqliteDriverName;
  label: string;
  /** Why this driver's tests do not run here (printed); undefined = they run. */
  skip?: string;
}

function cases(): SqliteDriverCase[] {
  const node: SqliteDriverCase = { driver: 'node', label: 'sqlite (node:sqlite)' };
  // On Node ≥ 22.13 node:sqlite must load: its absence is a failure, not a skip.
  if (!NODE_HAS_SQLITE && !builtinSqlite()) {
    node.skip = `node:sqlite needs Node.js 22.13+, this is ${process.version} (.ci/run runs these tests in its Node 22 pass)`;
  }
  const better: SqliteDriverCase = { driver: 'better-sqlite3', label: 'sqlite (better-sqlite3)' };
  const problem = inCi ? undefined : betterSqliteProblem();
  if (problem)
    better.skip = `better-sqlite3 cannot load on Node ${process.version}: ${problem} (rebuild it for this Node, as .ci/run does)`;
  return [node, better];
}

export const SQLITE_DRIVERS: readonly SqliteDriverCase[] = cases();

for (const c of SQLITE_DRIVERS) if (c.skip) console.warn(`SKIPPED — ${c.label} tests: ${c.skip}`);

/** The test name, saying when and why it is skipped (vitest lists skipped names). */
export const caseName = (c: SqliteDriverCase) => (c.skip ? `${c.label} — SKIPPED: ${c.skip}` : c.label);
