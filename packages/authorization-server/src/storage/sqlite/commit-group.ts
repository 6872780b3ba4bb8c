/**
 * The SQLite store's writes of concurrent requests, committed as one transaction.
 *
 * A write in its own transaction costs far more than its statement: in WAL mode every commit
 * takes and releases file locks and appends each page it changed to the log, about twenty
 * system calls, so a model row upsert on a WAL file costs several times the same upsert in an
 * in-memory database. Under load, the AS resumes several token requests in one turn of the event
 * loop, each with a write to make. Gathered and committed together at the end of the turn,
 * they share the locks, and pages they both touch are logged once. No timer: an idle server
 * adds no latency, and a lone write runs on its own.
 *
 * Each write is atomic by itself (one statement, or its own nested transaction, a savepoint in
 * the group), and writes run in submission order, so a group is the same as its writes one
 * after another. A write's promise resolves only once the group has committed: a request sees
 * its own writes, and nobody is told of a write that could still roll back. If anything in a
 * group fails (a write throws, or SQLite ends the transaction: disk full, lock timeout), the
 * whole group rolls back and each write runs again alone, so every write ends exactly as it
 * would have without the group, with its own result or error.
 */
import type { SqliteDriver } from './driver.js';

interface Pending {
  write: () => unknown;
  resolve: (result: unknown) => void;
  reject: (error: unknown) => void;
}

export class CommitGroup {
  #queue: Pending[] = [];
  #scheduled = false;

  constructor(private readonly db: SqliteDriver) {}

  /**
   * Runs `write` (synchronous, atomic by itself) with the other writes of this turn; the
   * promise settles once they are committed (or `write` failed on its own).
   */
  submit<T>(write: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ write, resolve: resolve as (result: unknown) => void, reject });
      if (this.#scheduled) return;
      this.#scheduled = true;
      setImmediate(() => this.flush());
    });
  }

  /** Commits the waiting writes now (the store calls this before it closes the database). */
  flush(): void {
    this.#scheduled = false;
    const queue = this.#queue;
    this.#queue = [];
    if (queue.length > 1) {
      let results: unknown[] | undefined;
      try {
        results = this.db.transaction(() => queue.map((pending) => pending.write()), 'immediate');
      } catch {
        // rolled back as a whole: each write runs alone below, with its own outcome
      }
      if (results !== undefined) {
        for (const [i, pending] of queue.entries()) pending.resolve(results[i]);
        return;
      }
    }
    for (const pending of queue) {
      try {
        pending.resolve(pending.write());
      } catch (error) {
        pending.reject(error);
      }
    }
  }
}
