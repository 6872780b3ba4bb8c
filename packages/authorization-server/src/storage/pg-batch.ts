/**
 * Statements of concurrent requests sent to PostgreSQL as one.
 *
 * Under load, the AS resumes several token requests in one turn of the event loop, and each
 * sends the same kind of statement (read a code, stamp it, save a refresh token). Every
 * statement costs a socket write and a wake-up of a backend on both sides, which on a busy
 * machine weighs more than the statement's own work; one statement over arrays of inputs
 * costs about the same as a single one. So inputs submitted in the same turn are gathered and
 * sent together at the end of the turn (no timer: an idle server adds no latency).
 *
 * Rules that keep a batch equivalent to its single statements:
 * - one statement never carries two inputs with the same key (a row): those wait for the
 *   statement before them to finish, in submission order;
 * - inputs run in key order, so concurrent statements (also on other instances) lock rows in
 *   one order;
 * - when a batch fails, each input is run alone through its single-statement path, which is
 *   told why (`batchError`): an error other than a lost connection means the statement was
 *   rolled back, while after a lost connection the single path must decide from the database
 *   whether the batch's effect happened (see `PgModels.consume`).
 */

interface Pending<I, R> {
  input: I;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
}

export interface BatchStatement<I, R> {
  /** The row an input touches: inputs with one key never share a statement. */
  key(input: I): string;
  /** One statement for several inputs (at least two, distinct keys, in key order); results in input order. */
  many(inputs: I[]): Promise<R[]>;
  /** The single statement; `batchError` is set when it runs after its batch failed. */
  one(input: I, batchError?: unknown): Promise<R>;
}

/** Inputs per statement, at most (a bound on array parameters and on one statement's work). */
export const MAX_BATCH = 64;

export class Batcher<I, R> {
  #queue: Pending<I, R>[] = [];
  #scheduled = false;

  constructor(private readonly statement: BatchStatement<I, R>) {}

  submit(input: I): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.#queue.push({ input, resolve, reject });
      this.#schedule();
    });
  }

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => this.#flush());
  }

  #flush(): void {
    this.#scheduled = false;
    const queue = this.#queue;
    this.#queue = [];
    const first = new Map<string, Pending<I, R>>();
    const later: Pending<I, R>[] = [];
    for (const pending of queue) {
      const key = this.statement.key(pending.input);
      if (first.has(key)) later.push(pending);
      else first.set(key, pending);
    }
    const ordered = [...first.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, pending]) => pending);
    const runs: Promise<void>[] = [];
    for (let i = 0; i < ordered.length; i += MAX_BATCH) runs.push(this.#run(ordered.slice(i, i + MAX_BATCH)));
    if (later.length > 0) {
      void Promise.allSettled(runs).then(() => {
        this.#queue.unshift(...later);
        this.#schedule();
      });
    }
  }

  async #run(batch: Pending<I, R>[]): Promise<void> {
    if (batch.length === 1) return this.#alone(batch[0]!);
    let results: R[];
    try {
      results = await this.statement.many(batch.map((pending) => pending.input));
    } catch (error) {
      await Promise.all(batch.map((pending) => this.#alone(pending, error)));
      return;
    }
    batch.forEach((pending, i) => pending.resolve(results[i]!));
  }

  async #alone(pending: Pending<I, R>, batchError?: unknown): Promise<void> {
    try {
      pending.resolve(await this.statement.one(pending.input, batchError));
    } catch (error) {
      pending.reject(error);
    }
  }
}
