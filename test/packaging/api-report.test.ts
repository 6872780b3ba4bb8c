import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * The API report of every published entry (`packages/<p>/api/<entry>.api.md`, api-extractor) is
 * committed, and `npm test` fails when the built declarations differ from it (issue 43): a change
 * of a public face is a reviewed diff, never a silent update in CI.
 */
const ROOT = join(import.meta.dirname, '..', '..');
const SCRIPT = join(ROOT, 'scripts', 'api-report.mjs');
const run = promisify(execFile);
const temp = mkdtempSync(join(tmpdir(), 'api-report-test-'));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

async function apiReport(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [SCRIPT, ...args], { cwd: ROOT, env: { ...process.env, ...env } });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, output: e.stdout + e.stderr };
  }
}

/** A copy of the resource server's committed report with one signature changed. */
function editedReport(): { dir: string; file: string; text: string } {
  const dir = mkdtempSync(join(temp, 'rs-'));
  const file = join(dir, 'index.api.md');
  copyFileSync(join(ROOT, 'packages/resource-server/api/index.api.md'), file);
  const before = readFileSync(file, 'utf8');
  const text = before.replace(
    'export function createResourceServer(options: ResourceServerOptions): ResourceServer;',
    'export function createResourceServer(options: ResourceServerOptions): unknown;',
  );
  expect(text).not.toBe(before);
  writeFileSync(file, text);
  return { dir, file, text };
}

describe('API reports (issue 43)', () => {
  it('every committed report matches the built declarations', async () => {
    const { code, output } = await apiReport(['--check'], { CI: '' });
    expect(output).toContain('match their reports');
    expect(code).toBe(0);
  }, 120_000);

  it('a report that differs from the build fails the check and is not rewritten', async () => {
    const { dir, file, text } = editedReport();
    const { code, output } = await apiReport(['--check', '--only', 'resource-server/index', '--report-dir', dir], { CI: '' });
    expect(code).toBe(1);
    expect(output).toContain('@mcp-auth-kit/resource-server: the API report differs from the build');
    expect(readFileSync(file, 'utf8')).toBe(text);
  }, 60_000);

  it('with CI set, `npm run api` checks instead of updating', async () => {
    const { dir, file, text } = editedReport();
    const { code } = await apiReport(['--only', 'resource-server/index', '--report-dir', dir], { CI: 'true' });
    expect(code).toBe(1);
    expect(readFileSync(file, 'utf8')).toBe(text);
  }, 60_000);
});
