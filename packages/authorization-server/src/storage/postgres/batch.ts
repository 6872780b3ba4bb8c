/**
 * Statements of concurrent requests sent to PostgreSQL as one.
 *
 * Under load, the AS resumes several token requests in one turn of the event loop, and each
 * sends the same kind of statement (read a code, stamp it, save a refresh token). Every
 * statement costs a socket write and a wake-up of a backend on both sides, which on a busy
 * machine weighs more than the statement's own work; one statement for several inputs costs
 * little more than a single one. So inputs submitted in the same turn are gathered and
 * sent together at the end of the turn (no timer: an idle server adds no latency). And while
 * a statement holds the batcher's {@link Gate} (shared by several batchers, one place by
 * default), new inputs wait for it to finish and then go together: under load, requests rarely
 * resume in the same turn but often while an earlier statement is on its way (at 10 concurrent
 * code exchanges the wait more than halves the consume statements sent per exchange). A waiting input waits for the running statement, and for those of the other
 * batchers that were waiting before it (woken in order); the store's statements are short (key
 * lookups, no long row locks), so that is a few round trips at most, and only under load.
 *
 * Rules that keep a batch equivalent to its single statements:
 * - one statement never carries two inputs with the same key (a row), and an input whose key is
 *   in a statement still running (with room for several statements at once) does not go in
 *   another: those wait for the statement before them to finish, in submission order;
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

/**
 * How many batch statements may run at once, shared by the batchers given the same gate (a
 * turn's statements hold one place together); inputs that find no place gather for the next.
 */
export class Gate {
  #running = 0;
  readonly #waiting = new Set<() => void>();

  constructor(readonly max: number) {}

  /** Takes a place, or returns false and calls `wake` once a place is given back. */
  enter(wake: () => void): boolean {
    if (this.#running < this.max) {
      this.#running += 1;
      return true;
    }
    this.#waiting.add(wake);
    return false;
  }

  leave(): void {
    this.#running -= 1;
    const waiting = [...this.#waiting];
    this.#waiting.clear();
    for (const wake of waiting) wake();
  }
}

export class Batcher<I, R> {
  #queue: Pending<I, R>[] = [];
  #scheduled = false;
  /** Keys of the inputs in this batcher's statements still running. */
  readonly #running = new Set<string>();
  readonly #wake = () => this.#schedule();

  constructor(
    private readonly statement: BatchStatement<I, R>,
    private readonly gate = new Gate(1),
  ) {}

  submit(input: I): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.#queue.push({ input, resolve, reject });
      this.#schedule();
    });
  }

  #schedule(): void {
    if (this.#scheduled || this.#queue.length === 0) return;
    this.#scheduled = true;
    setImmediate(() => this.#flush());
  }

  #flush(): void {
    this.#scheduled = false;
    if (!this.gate.enter(this.#wake)) return;
    const queue = this.#queue;
    this.#queue = [];
    const first = new Map<string, Pending<I, R>>();
    const later: Pending<I, R>[] = [];
    for (const pending of queue) {
      const key = this.statement.key(pending.input);
      if (first.has(key) || this.#running.has(key)) later.push(pending);
      else first.set(key, pending);
    }
    // back at the head of the queue: the end of the statement holding their key schedules them
    this.#queue.unshift(...later);
    if (first.size === 0) {
      this.gate.leave();
      return;
    }
    for (const key of first.keys()) this.#running.add(key);
    const ordered = [...first.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, pending]) => pending);
    const runs: Promise<void>[] = [];
    // one place in the gate for the whole turn, however many statements of 64 it makes
    for (let i = 0; i < ordered.length; i += MAX_BATCH) runs.push(this.#run(ordered.slice(i, i + MAX_BATCH)));
    void Promise.allSettled(runs).then(() => {
      for (const key of first.keys()) this.#running.delete(key);
      this.gate.leave();
      this.#schedule();
    });
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
    for (const [i, pending] of batch.entries()) pending.resolve(results[i]!);
  }

  async #alone(pending: Pending<I, R>, batchError?: unknown): Promise<void> {
    try {
      pending.resolve(await this.statement.one(pending.input, batchError));
    } catch (error) {
      pending.reject(error);
    }
  }
}
