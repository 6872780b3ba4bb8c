/**
 * The kit is runner-neutral: the same built package works under node:test (no vitest globals,
 * AssertionError reported by the runner).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runProcess } from './helpers/run-process.js';
import { node22, unavailableNode22 } from '../../../test/helpers/node22.js';

// A Node 22+ binary (the running Node when it is 22+, else one from the npm registry).
const NODE_22 = await node22();

function runNodeTest(fixture: string, node = process.execPath): Promise<{ code: number | null; output: string }> {
  const file = fileURLToPath(new URL(`./fixtures/${fixture}`, import.meta.url));
  return runProcess(node, ['--test', '--test-reporter=tap', file], fileURLToPath(new URL('..', import.meta.url)));
}

describe('node:test', () => {
  it('runs the kit (built dist) against a real resource server: all tests pass', async () => {
    const { code, output } = await runNodeTest('node-test-pass.mjs');
    expect(output).toMatch(/^# pass 3$/m);
    expect(output).toMatch(/^# fail 0$/m);
    expect(code).toBe(0);
  }, 60_000);

  it.skipIf(unavailableNode22('the node:test run on Node 22', NODE_22))(
    'works on Node 22 too',
    async () => {
      const { code, output } = await runNodeTest('node-test-pass.mjs', NODE_22.path);
      expect(output).toMatch(/^# pass 3$/m);
      expect(code).toBe(0);
    },
    60_000,
  );

  it('reports a failing kit assertion as a test failure with its message', async () => {
    const { code, output } = await runNodeTest('node-test-fail.mjs');
    expect(code).toBe(1);
    expect(output).toMatch(/^# fail 1$/m);
    expect(output).toContain('expected HTTP 403, got 401');
    expect(output).toMatch(/ERR_ASSERTION/);
  }, 60_000);
});

describe('runner neutrality', () => {
  it('the built library imports no test runner and calls no runner globals', () => {
    const dist = fileURLToPath(new URL('../dist/', import.meta.url));
    const files = readdirSync(dist).filter((f) => f.endsWith('.js'));
    expect(files.length).toBeGreaterThan(5);
    for (const file of files) {
      const code = readFileSync(`${dist}${file}`, 'utf8');
      expect(code, file).not.toMatch(/from ['"](vitest|@jest\/globals|jest|node:test|mocha)['"]/);
      expect(code, file).not.toMatch(/(?<![.\w])(describe|it|test|expect|vi|jest|beforeAll|afterAll|beforeEach|afterEach)\(/);
    }
  });
});
