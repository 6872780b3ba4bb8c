import { createInterface, type Interface } from 'node:readline';

/** The CLI's standard input, when it has one: read line by line for the questions it asks. */
export type CliInput = NodeJS.ReadableStream & { isTTY?: boolean };

export interface LineInput {
  /** The next line the user typed; `undefined` at end of input (Ctrl-D) or when `signal` aborts. */
  next(signal?: AbortSignal): Promise<string | undefined>;
  /** Stops reading, so that the process can end. */
  close(): void;
}

/**
 * Lines of `input`, read only while a question waits for one and queued in between (a user who
 * types ahead loses nothing). The reader starts at the first question: a command that asks
 * nothing never touches standard input.
 */
export function lineInput(input: CliInput): LineInput {
  let rl: Interface | undefined;
  let ended = false;
  const queued: string[] = [];
  const waiting: ((line: string | undefined) => void)[] = [];
  const start = () => {
    rl = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY, terminal: false });
    rl.on('line', (line) => {
      const take = waiting.shift();
      if (take) take(line);
      else queued.push(line);
    });
    rl.on('close', () => {
      ended = true;
      for (const take of waiting.splice(0)) take(undefined);
    });
  };
  return {
    next(signal) {
      if (!rl && !ended) start();
      if (queued.length > 0) return Promise.resolve(queued.shift());
      if (ended || signal?.aborted) return Promise.resolve(undefined);
      return new Promise((resolve) => {
        const take = (line: string | undefined) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(line);
        };
        const onAbort = () => {
          const at = waiting.indexOf(take);
          if (at !== -1) waiting.splice(at, 1);
          resolve(undefined);
        };
        waiting.push(take);
        signal?.addEventListener('abort', onAbort, { once: true });
      });
    },
    close() {
      ended = true;
      rl?.close();
    },
  };
}
