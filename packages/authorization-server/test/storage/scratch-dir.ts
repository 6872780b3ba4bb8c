import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

/** A new temporary folder for the SQLite files of the enclosing suite (or file), removed after it. */
export function scratchDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), `mcp-auth-kit-${prefix}-`));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
