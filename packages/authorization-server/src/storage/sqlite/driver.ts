/**
 * The two synchronous SQLite drivers behind one small interface, so the store's SQL and logic
 * (`index.ts` and its neighbours) exist once: Node's built-in `node:sqlite` (Node ≥ 22.13 without a flag; no
 * native build to install) and better-sqlite3 (an optional peer, for older Node). Both bind a
 * JS number as REAL and return INTEGER columns as numbers, so the same statements store the
 * same values whichever driver wrote the file.
 */
import type BetterSqlite3 from 'better-sqlite3';
import { driverMissing, StorageError } from '../errors.js';

export type SqliteDriverName = 'node' | 'better-sqlite3';

type Params = unknown[];

export interface SqliteStatement {
  get(...params: Params): unknown;
  all(...params: Params): unknown[];
  run(...params: Params): { changes: number | bigint };
}

export interface SqliteDriver {
  readonly name: SqliteDriverName;
  prepare(sql: string): SqliteStatement;
  exec(sql: string): void;
  /** Runs `fn` in a transaction (`BEGIN` or `BEGIN IMMEDIATE`); a nested call is a savepoint. */
  transaction<T>(fn: () => T, mode?: 'deferred' | 'immediate'): T;
  /** A UNIQUE or PRIMARY KEY constraint failed. */
  isUniqueViolation(error: unknown): boolean;
  close(): void;
}

/**
 * The part of `node:sqlite` used here, typed locally: @types/node for Node 20 (the oldest
 * supported type set) has no `node:sqlite`.
 */
interface NodeDatabase {
  prepare(sql: string): SqliteStatement;
  exec(sql: string): void;
  close(): void;
}
interface NodeSqliteModule {
  DatabaseSync: new (path: string) => NodeDatabase;
}

class BetterSqliteDriver implements SqliteDriver {
  readonly name = 'better-sqlite3';
  constructor(private readonly db: BetterSqlite3.Database) {}

  prepare(sql: string): SqliteStatement {
    return this.db.prepare(sql);
  }

  exec(sql: string): void {
    this.db.exec(sql);
  }

  transaction<T>(fn: () => T, mode: 'deferred' | 'immediate' = 'deferred'): T {
    return this.db.transaction(fn)[mode]();
  }

  isUniqueViolation(error: unknown): boolean {
    const code = (error as { code?: unknown })?.code;
    return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
  }

  close(): void {
    this.db.close();
  }
}

// SQLite's extended result codes (https://sqlite.org/rescode.html): node:sqlite reports them
// as `errcode` (its `code` is always ERR_SQLITE_ERROR).
const SQLITE_CONSTRAINT_PRIMARYKEY = 1555;
const SQLITE_CONSTRAINT_UNIQUE = 2067;

class NodeSqliteDriver implements SqliteDriver {
  readonly name = 'node';
  private depth = 0;
  constructor(private readonly db: NodeDatabase) {}

  prepare(sql: string): SqliteStatement {
    return this.db.prepare(sql);
  }

  exec(sql: string): void {
    this.db.exec(sql);
  }

  /** better-sqlite3's `transaction()` semantics: commit on return, roll back and rethrow on throw. */
  transaction<T>(fn: () => T, mode: 'deferred' | 'immediate' = 'deferred'): T {
    if (this.depth > 0) {
      const savepoint = `nested_${this.depth}`;
      this.db.exec(`SAVEPOINT ${savepoint}`);
      this.depth++;
      try {
        const result = fn();
        this.db.exec(`RELEASE ${savepoint}`);
        return result;
      } catch (error) {
        this.db.exec(`ROLLBACK TO ${savepoint}`);
        this.db.exec(`RELEASE ${savepoint}`);
        throw error;
      } finally {
        this.depth--;
      }
    }
    this.db.exec(mode === 'immediate' ? 'BEGIN IMMEDIATE' : 'BEGIN');
    this.depth++;
    try {
      const result = fn();
      this.db.exec('COMMIT');
      return result;
    } catch (error) {
      // A failed COMMIT (e.g. SQLITE_BUSY) can leave the transaction open: end it either way.
      try {
        this.db.exec('ROLLBACK');
      } catch {
        // already rolled back by SQLite
      }
      throw error;
    } finally {
      this.depth--;
    }
  }

  isUniqueViolation(error: unknown): boolean {
    const errcode = (error as { errcode?: unknown })?.errcode;
    return errcode === SQLITE_CONSTRAINT_UNIQUE || errcode === SQLITE_CONSTRAINT_PRIMARYKEY;
  }

  close(): void {
    this.db.close();
  }
}

let nodeSqlite: NodeSqliteModule | null | undefined;

/**
 * `node:sqlite` when this Node has it without a flag (22.13+), else undefined. Node 22 and 23
 * print "ExperimentalWarning: SQLite is an experimental feature" when the module first loads;
 * the store uses a small, stable part of it (prepare/get/all/run/exec), so that one warning is
 * not passed on: it would appear at every start of the AS and in users' test output. Any other
 * warning emitted meanwhile goes through.
 */
export function builtinSqlite(): NodeSqliteModule | undefined {
  if (nodeSqlite !== undefined) return nodeSqlite ?? undefined;
  const getBuiltinModule = (process as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
  if (typeof getBuiltinModule !== 'function') {
    nodeSqlite = null;
    return undefined;
  }
  const emitWarning = process.emitWarning;
  process.emitWarning = function (this: unknown, warning: string | Error, ...rest: unknown[]) {
    const text = typeof warning === 'string' ? warning : warning?.message;
    if (typeof text === 'string' && text.startsWith('SQLite is an experimental feature')) return;
    return (emitWarning as (...args: unknown[]) => void).call(process, warning, ...rest);
  } as typeof process.emitWarning;
  try {
    nodeSqlite = (getBuiltinModule.call(process, 'node:sqlite') as NodeSqliteModule | undefined) ?? null;
  } catch {
    nodeSqlite = null;
  } finally {
    process.emitWarning = emitWarning;
  }
  return nodeSqlite ?? undefined;
}

function openNode(file: string): SqliteDriver {
  const sqlite = builtinSqlite();
  if (!sqlite) {
    throw new StorageError(
      `the SQLite driver 'node' needs node:sqlite (Node.js 22.13 or later); this is Node.js ${process.version}`,
      'unavailable',
    );
  }
  return new NodeSqliteDriver(new sqlite.DatabaseSync(file));
}

async function openBetterSqlite(file: string, noBuiltin: boolean): Promise<SqliteDriver> {
  let Database: typeof BetterSqlite3;
  try {
    ({ default: Database } = await import('better-sqlite3'));
  } catch (error) {
    const missing = driverMissing('SQLite', 'better-sqlite3', error);
    if (noBuiltin && missing.message.includes('is not installed')) {
      throw new StorageError(
        `the SQLite store needs Node.js 22.13 or later (built-in node:sqlite; this is ${process.version}) or the better-sqlite3 package, which is not installed: npm install better-sqlite3`,
        'unavailable',
        { cause: error },
      );
    }
    throw missing;
  }
  try {
    return new BetterSqliteDriver(new Database(file));
  } catch (error) {
    // The binding is loaded lazily by the constructor: an ABI mismatch surfaces here.
    const code = (error as { code?: unknown }).code;
    const message = String((error as Error).message ?? '');
    if (code === 'ERR_DLOPEN_FAILED' || /NODE_MODULE_VERSION|bindings file|better_sqlite3\.node/.test(message)) {
      throw new StorageError(`the SQLite driver cannot load on Node.js ${process.version}: ${message.split('\n')[0]}`, 'unavailable', {
        cause: error,
      });
    }
    throw error;
  }
}

/**
 * Opens `file` with the chosen driver, or by default `node:sqlite` when this Node has it, else
 * better-sqlite3. A driver that cannot load is an `unavailable` StorageError naming what to
 * install (never a silent switch when one was chosen).
 */
export async function openSqliteDriver(file: string, driver?: SqliteDriverName): Promise<SqliteDriver> {
  switch (driver) {
    case 'node':
      return openNode(file);
    case 'better-sqlite3':
      return openBetterSqlite(file, false);
    case undefined:
      return builtinSqlite() ? openNode(file) : openBetterSqlite(file, true);
    default:
      throw new StorageError(`unknown SQLite driver ${String(driver)}: use 'node' or 'better-sqlite3'`, 'misconfigured');
  }
}
