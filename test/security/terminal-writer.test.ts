import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { createTerminal, type TerminalText } from '@mcp-auth-kit/protocol';
import { describe, expect, it } from 'vitest';
import { walkSources } from '@mcp-auth-kit/test-utils';

/**
 * What a server says is data, never layout (issue 46): the CLI and the admin tool print through
 * ONE writer, `createTerminal` of @mcp-auth-kit/protocol, which takes only TerminalText (built by
 * its `terminalText` tag: literals are layout, values are made visible). This scan enumerates
 * every place in the CLI and the admin tool that could write to stdout or stderr (`console.*`,
 * `process.stdout` / `process.stderr`, `.write(`, `/dev/tty`) and fails on any that is not one of
 * the reviewed entry points below, which hand the raw streams to that writer and to nothing else.
 */
const ROOT = join(import.meta.dirname, '..', '..');

const walk = (dir: string, keep: (path: string) => boolean) => walkSources(dir, { keep, skip: ['node_modules', 'dist', 'test'] });

const isSource = (path: string) => /\.(ts|js|mjs)$/.test(path) && !path.endsWith('.d.ts');
const printers = [
  ...walk(join(ROOT, 'packages/cli/src'), isSource),
  ...walk(join(ROOT, 'packages/cli/bin'), isSource),
  ...walk(join(ROOT, 'apps/auth-server/src'), (p) => isSource(p) && /\/(admin[^/]*|password-input)\.ts$/.test(p)),
].map((path) => ({ path: relative(ROOT, path), text: readFileSync(path, 'utf8') }));

/** Anything that writes to a standard stream or the terminal without the writer. */
const RAW_OUTPUT =
  /\bconsole\s*\.\s*\w+|\bprocess\s*\.\s*(?:stdout|stderr)\b|\.write(?:Sync)?\s*\(|\/dev\/(?:tty|stdout|stderr)|_rawDebug/g;

/**
 * The reviewed places, as `file: line` (trimmed): the entry points give the raw streams to the
 * CLI's run() (which wraps them in createTerminal at once) or to createTerminal itself; the admin
 * tool's password prompt writes only its literal prompts (checked below) to stderr.
 */
const ALLOWED = new Set([
  'packages/cli/bin/mcp-auth-kit.js: stdout: (text) => process.stdout.write(text),',
  'packages/cli/bin/mcp-auth-kit.js: stderr: (text) => process.stderr.write(text),',
  'apps/auth-server/src/admin-main.ts: const term = createTerminal({ stdout: (text) => process.stdout.write(text), stderr: (text) => process.stderr.write(text) });',
  'apps/auth-server/src/admin-main.ts: readPassword: () => readNewPassword({ env: process.env, input: process.stdin, output: process.stderr }),',
]);

function rawOutputs(): string[] {
  const found: string[] = [];
  for (const { path, text } of printers) {
    for (const line of text.split('\n')) {
      if (/^\s*(?:\/\/|\*|\/\*)/.test(line)) continue; // comments
      RAW_OUTPUT.lastIndex = 0;
      if (RAW_OUTPUT.test(line)) found.push(`${path}: ${line.trim()}`);
    }
  }
  return found;
}

describe('one writer for terminals: the CLI and the admin tool print only through createTerminal (issue 46)', () => {
  it('the scan sees the printers (guards against a scan that checks nothing)', () => {
    const paths = printers.map((p) => p.path);
    for (const expected of [
      'packages/cli/src/program.ts',
      'packages/cli/bin/mcp-auth-kit.js',
      'apps/auth-server/src/admin.ts',
      'apps/auth-server/src/admin-main.ts',
      'apps/auth-server/src/password-input.ts',
    ]) {
      expect(paths).toContain(expected);
    }
    // The allowed entry points are really there (a renamed stream would make the list stale).
    expect(rawOutputs().filter((line) => ALLOWED.has(line))).toHaveLength(ALLOWED.size);
  });

  it('every place that writes to stdout or stderr is a reviewed entry point', () => {
    expect(rawOutputs().filter((line) => !ALLOWED.has(line))).toEqual([]);
  });

  it('the scan would catch a bypass (console.log, process.stdout.write, a stream .write)', () => {
    for (const bypass of ['console.log(name)', 'process.stdout.write(name)', 'io.stderr.write(x)', "fs.writeSync(fd, '')"]) {
      RAW_OUTPUT.lastIndex = 0;
      expect(RAW_OUTPUT.test(bypass), bypass).toBe(true);
    }
  });

  it('the CLI builds its terminal from the raw streams and never uses them otherwise', () => {
    const program = printers.find((p) => p.path === 'packages/cli/src/program.ts')!.text;
    expect(program.match(/createTerminal\(io\)/g)).toHaveLength(2);
    expect(program).not.toMatch(/\bio\s*\.\s*(?:stdout|stderr)\b/);
  });

  it('the password prompt writes only literal prompts', () => {
    const input = printers.find((p) => p.path === 'apps/auth-server/src/password-input.ts')!.text;
    const calls = [...input.matchAll(/\bprompt\(source,\s*(.+?)\);?$/gm)].map((m) => m[1]!);
    expect(calls.length).toBeGreaterThanOrEqual(2);
    for (const arg of calls) expect(arg).toMatch(/^'[^'\\]*'$/);
  });

  it('no source casts a string to TerminalText outside @mcp-auth-kit/protocol (values go through the terminalText tag)', () => {
    const sources = ['packages', 'apps'].flatMap((dir) => walk(join(ROOT, dir), (p) => p.endsWith('.ts') && !p.endsWith('.d.ts')));
    const offenders = sources
      .map((path) => relative(ROOT, path))
      .filter((path) => !path.startsWith('packages/protocol/'))
      .filter((path) => /\bas\s+TerminalText\b|<TerminalText>/.test(readFileSync(join(ROOT, path), 'utf8')));
    expect(offenders).toEqual([]);
  });

  it('no source outside @mcp-auth-kit/protocol grows its own control / invisible character filter', () => {
    const sources = ['packages', 'apps'].flatMap((dir) => walk(join(ROOT, dir), (p) => p.endsWith('.ts') && !p.endsWith('.d.ts')));
    const offenders = sources
      .map((path) => relative(ROOT, path))
      .filter((path) => !path.startsWith('packages/protocol/'))
      .filter((path) =>
        /\\u001b|\\x1b|\\u009b|\\p\{(?:Cc|Cf|Zl|Zp|Default_Ignorable_Code_Point)\}|\\u200b|\\u202e/.test(
          readFileSync(join(ROOT, path), 'utf8'),
        ),
      );
    expect(offenders).toEqual([]);
  });

  it('the writer takes TerminalText only: a plain string does not compile', () => {
    const written: string[] = [];
    const term = createTerminal({ stdout: (t) => void written.push(t), stderr: (t) => void written.push(t) });
    // @ts-expect-error a server's string is not TerminalText: it must go through terminalText
    term.out('plain\u001b[2J');
    const text: TerminalText | string = 'x';
    // @ts-expect-error likewise for err
    term.err(text);
    // Even then, the writer's own guard escapes what would act on the terminal.
    expect(written).toEqual(['plain\\u001b[2J', 'x']);
  });
});
