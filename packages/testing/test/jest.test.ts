/**
 * The kit is runner-neutral: the same built package works under jest (ESM mode, the package is
 * ESM-only), and a failing kit assertion is reported by jest as a failed test.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runProcess } from './helpers/run-process.js';

const jestBin = join(createRequire(import.meta.url).resolve('jest/package.json'), '..', 'bin', 'jest.js');
const fixtures = fileURLToPath(new URL('./fixtures/jest/', import.meta.url));

async function runJest(fixture: string): Promise<{ code: number | null; output: string }> {
  const cacheDirectory = await mkdtemp(join(tmpdir(), 'kit-jest-'));
  const config = JSON.stringify({ testEnvironment: 'node', transform: {}, testMatch: [`**/${fixture}`], cacheDirectory });
  try {
    const args = ['--experimental-vm-modules', jestBin, '--ci', '--rootDir', fixtures, '--config', config];
    return await runProcess(process.execPath, args, fixtures);
  } finally {
    await rm(cacheDirectory, { recursive: true, force: true });
  }
}

describe('jest (ESM mode)', () => {
  it('runs the kit (built dist) against a real resource server: all tests pass', async () => {
    const { code, output } = await runJest('kit-pass.test.mjs');
    expect(output).toMatch(/Tests:\s+3 passed, 3 total/);
    expect(code, output).toBe(0);
  }, 90_000);

  it('reports a failing kit assertion as a test failure with its message', async () => {
    const { code, output } = await runJest('kit-fail.test.mjs');
    expect(code).toBe(1);
    expect(output).toMatch(/Tests:\s+1 failed, 1 total/);
    expect(output).toContain('expected HTTP 403, got 401');
  }, 90_000);
});
