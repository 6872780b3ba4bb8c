import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A fenced block of a README that a docs test runs. It is marked by an HTML comment on the
 * line before its fence (invisible on GitHub and npm):
 *
 *   <!-- docs-test: demo -->   runs against `npm start`'s demo stack (CLI commands, client code)
 *   <!-- docs-test: admin -->  admin-tool commands on `npm start`'s store
 *   <!-- docs-test: extensions-config -->  the AS config file `npm start` is given for the authorization extensions
 *   <!-- docs-test: extensions -->  `npm start` with that file and an enterprise IdP, then the CLI's machine and enterprise logins
 */
export interface MarkedBlock {
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  kind: MarkerKind;
  /** The fence's info string: `sh`, `ts`, … */
  lang: string;
  code: string;
}

const MARKER = /^\s*<!--\s*docs-test:\s*([\w-]+)\s*-->\s*$/;
const KINDS = ['demo', 'admin', 'extensions', 'extensions-config'] as const;
type MarkerKind = (typeof KINDS)[number];
const FENCE = /^(\s*)(`{3,})\s*([\w-]*)/;

/** Every README.md tracked by git (what a clone has), relative to `root`. */
export function readmeFiles(root: string): string[] {
  const listed = execFileSync('git', ['ls-files', '*README.md', 'README.md'], { cwd: root, encoding: 'utf8' });
  return [...new Set(listed.split('\n').filter(Boolean))].filter((f) => !f.startsWith('.changeset/'));
}

/** The fenced blocks of a Markdown text, with the marker before each (if any). */
export function fencedBlocks(text: string): { line: number; lang: string; code: string; marker?: string }[] {
  const lines = text.split('\n');
  const blocks: { line: number; lang: string; code: string; marker?: string }[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]!);
    if (!open) continue;
    const [, indent, fence, lang] = open;
    let end = i + 1;
    while (end < lines.length && !lines[end]!.trimStart().startsWith(fence!)) end++;
    const code = lines
      .slice(i + 1, end)
      .map((l) => (l.startsWith(indent!) ? l.slice(indent!.length) : l))
      .join('\n');
    let before = i - 1;
    while (before >= 0 && lines[before]!.trim() === '') before--;
    const marker = before >= 0 ? MARKER.exec(lines[before]!)?.[1] : undefined;
    blocks.push({ line: i + 1, lang: lang ?? '', code, ...(marker && { marker }) });
    i = end;
  }
  return blocks;
}

export function markedBlocks(root: string): MarkedBlock[] {
  const out: MarkedBlock[] = [];
  for (const file of readmeFiles(root)) {
    for (const block of fencedBlocks(readFileSync(join(root, file), 'utf8'))) {
      if (!block.marker) continue;
      if (!(KINDS as readonly string[]).includes(block.marker)) {
        throw new Error(`${file}:${block.line}: unknown docs-test marker "${block.marker}" (${KINDS.join(', ')})`);
      }
      out.push({ file, line: block.line, kind: block.marker as MarkerKind, lang: block.lang, code: block.code });
    }
  }
  return out;
}

/** The commands of a shell block: one a line, comments dropped (a `#` after a space starts one). */
export function shellCommands(code: string): string[] {
  return code
    .split('\n')
    .map((line) => line.replace(/(^|\s)#.*$/, '').trim())
    .filter(Boolean);
}

/**
 * A shell script run by `/bin/sh` in `cwd` without blocking this process (a stack may run in it),
 * killed after `timeoutMs`; stdout and stderr together. `exitOnError`: `sh -e` (a block whose
 * lines share variables runs as one script and stops at the first failing command).
 */
export function runShell(
  script: string,
  options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number; exitOnError?: boolean },
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const args = [...(options.exitOnError ? ['-e'] : []), '-c', script];
    const child = spawn('/bin/sh', args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

/** Makes `bin` with an `xdg-open` that is the fake browser (fake-browser.mjs), for the CLI to open URLs in. */
export function fakeBrowserBin(root: string, bin: string): void {
  mkdirSync(bin);
  writeFileSync(join(bin, 'xdg-open'), `#!/bin/sh\nexec "${process.execPath}" "${join(root, 'test/docs/fake-browser.mjs')}" "$@"\n`);
  chmodSync(join(bin, 'xdg-open'), 0o755);
}

/** A user's terminal: the fake browser of `bin` first on PATH, the CLI's files in `home`, not CI (so the CLI opens the browser). */
export function userTerminalEnv(bin: string, home: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PATH: `${bin}:${process.env.PATH ?? ''}`,
    MCP_AUTH_KIT_HOME: home,
    XDG_CONFIG_HOME: home,
    FAKE_BROWSER_LOG: join(home, 'browser.log'),
  };
  delete env.CI;
  return env;
}
