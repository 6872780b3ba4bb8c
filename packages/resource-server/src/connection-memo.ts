/**
 * One remembered input and its value per connection (a socket): a client repeats the same header
 * and token on every request of a keep-alive connection. For pure functions only: the value is
 * what `compute` gives for the input, so nothing in it goes stale. A `compute` that throws
 * remembers nothing. The input is kept as a value beside its result, never as a key, and goes
 * with the connection (a `WeakMap` keyed by it).
 */
export class ConnectionMemo<V> {
  readonly #last = new WeakMap<object, { input: string; value: V }>();

  /** `compute(input)`, or the connection's last value when its last input was this same string. */
  get(connection: object | undefined, input: string, compute: (input: string) => V): V {
    if (connection === undefined) return compute(input);
    const last = this.#last.get(connection);
    if (last !== undefined && last.input === input) return last.value;
    const value = compute(input);
    this.#last.set(connection, { input, value });
    return value;
  }
}
