import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect } from 'vitest';
import { McpAuthError } from '../../src/index.js';

/**
 * Scratch folders and child processes of one test file, removed and killed after each test:
 * `tmp()` makes a folder, `children` takes the processes the test spawns.
 */
export function scratch(prefix: string): { tmp(): string; children: ChildProcess[] } {
  const dirs: string[] = [];
  const children: ChildProcess[] = [];
  afterEach(() => {
    while (children.length) children.pop()!.kill('SIGKILL');
    while (dirs.length) rmSync(dirs.pop()!, { recursive: true, force: true });
  });
  return {
    tmp() {
      const d = mkdtempSync(join(tmpdir(), prefix));
      dirs.push(d);
      return d;
    },
    children,
  };
}

/**
 * `start` for one test file: what it starts (a loopback server) is closed after the test that
 * started it.
 */
export function closeAfterEach<Args extends unknown[], T extends { close(): Promise<void> }>(
  start: (...args: Args) => Promise<T>,
): (...args: Args) => Promise<T> {
  const started: T[] = [];
  afterEach(async () => {
    while (started.length) await started.pop()!.close();
  });
  return async (...args) => {
    const s = await start(...args);
    started.push(s);
    return s;
  };
}

/** The McpAuthError `p` rejects with, and how long it took to. */
export async function refusal(p: Promise<unknown>): Promise<{ err: McpAuthError; ms: number }> {
  const started = Date.now();
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(McpAuthError);
  return { err: err as McpAuthError, ms: Date.now() - started };
}
