import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

// The admin tool as an operator meets it: `npm run admin -- …` at the repository root (the
// script runs dist/admin-main.js, so this needs `npm run build`, which `npm test` does).
const root = fileURLToPath(new URL('../../../', import.meta.url));
const main = join(root, 'apps/auth-server/dist/admin-main.js');
const npmCli = process.env.npm_execpath && existsSync(process.env.npm_execpath) ? process.env.npm_execpath : undefined;
const dir = mkdtempSync(join(tmpdir(), 'as-admin-process-'));
const env = { ...process.env, DATABASE_URL: `sqlite:${join(dir, 'as.sqlite')}`, AS_ADMIN_PASSWORD: '', AS_CONFIG_FILE: '' };
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** stderr without Node 20's "Unsupported runtime" notice of oidc-provider (not ours to print). */
const ownLines = (text: string) => text.split('\n').filter((l) => l && !l.startsWith('oidc-provider WARNING'));

function admin(args: string[], input = '', extraEnv: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [main, ...args], { env: { ...env, ...extraEnv }, input, encoding: 'utf8', cwd: root });
  return { code: r.status, out: ownLines(r.stdout), err: ownLines(r.stderr) };
}

describe.skipIf(!existsSync(main))('admin tool as a process (`npm run admin -- …`)', () => {
  it.skipIf(!npmCli)('the root script runs it and `--help` names only commands that exist here', () => {
    const r = spawnSync(process.execPath, [npmCli!, 'run', '-s', 'admin', '--', '--help'], { env, encoding: 'utf8', cwd: root });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^usage: npm run admin -- <command>/);
    expect(r.stdout).not.toMatch(/mcp-auth-server-admin|npx/);
    const bin = (JSON.parse(readFileSync(join(root, 'apps/auth-server/package.json'), 'utf8')) as { bin: Record<string, string> }).bin;
    expect(existsSync(join(root, 'apps/auth-server', bin['mcp-auth-server-admin']!))).toBe(true);
  });

  it('a piped password (first line of stdin) works for scripts; runtime errors print the error alone, exit 1', () => {
    const add = admin(['user', 'add', 'erin'], 'erin-password-1\nignored second line\n');
    expect(add.err).toEqual([]);
    expect(add.code).toBe(0);
    expect(add.out[0]).toMatch(/^created user erin \(sub /);
    const again = admin(['user', 'add', 'erin'], 'erin-password-1\n');
    expect(again).toMatchObject({ code: 1, err: ['error: user "erin" already exists; nothing changed'] });
    const nobody = admin(['user', 'disable', 'nobody']);
    expect(nobody).toMatchObject({ code: 1, err: ['error: no such user "nobody" (`npm run admin -- user list` lists them)'] });
    const grant = admin(['grants', 'revoke', 'erin', 'some-client']);
    expect(grant.code).toBe(1);
    expect(grant.err).toHaveLength(1);
  });

  it('empty stdin says "no password given" (exit 1), and nothing is created', () => {
    const r = admin(['user', 'add', 'frank'], '');
    expect(r).toMatchObject({
      code: 1,
      err: ['error: no password given: type it at the prompt, pipe it as the first line of stdin, or set AS_ADMIN_PASSWORD'],
    });
    expect(admin(['user', 'list']).out.join('\n')).not.toContain('frank');
  });

  it('a usage error prints the error, then the usage (exit 2)', () => {
    const r = admin(['user', 'frobnicate']);
    expect(r.code).toBe(2);
    expect(r.err[0]).toBe('error: unknown command "user frobnicate"');
    expect(r.err[1]).toMatch(/^usage: npm run admin -- <command>/);
  });

  // A real terminal (util-linux `script` gives the tool a pseudo-terminal): the password is not
  // echoed, and it is asked twice.
  const hasScript = spawnSync('script', ['--version'], { encoding: 'utf8' }).stdout?.includes('util-linux') ?? false;

  async function onTerminal(args: string[], answers: string[]) {
    const command = [process.execPath, main, ...args].map((a) => `'${a}'`).join(' ');
    const child = spawn('script', ['-qfec', command, '/dev/null'], { env, cwd: root, stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    const pending = [...answers];
    let prompts = 0;
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      // Answer each prompt once it is shown (a line typed early would reach the first prompt).
      const shown = (output.match(/new password \(not shown\): |the same password again: /g) ?? []).length;
      while (prompts < shown && pending.length) {
        prompts++;
        child.stdin.write(`${pending.shift()}\r`);
      }
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    return { code, output };
  }

  it.skipIf(!hasScript)('on a terminal: no echo, asked twice; entries that differ change nothing', async () => {
    const ok = await onTerminal(['user', 'add', 'gina'], ['gina-secret-pw', 'gina-secret-pw']);
    expect(ok.output).toContain('new password (not shown): ');
    expect(ok.output).toContain('the same password again: ');
    expect(ok.output).toMatch(/created user gina/);
    expect(ok.output).not.toContain('gina-secret-pw');
    expect(ok.code).toBe(0);

    const differ = await onTerminal(['user', 'set-password', 'gina'], ['first-attempt-1', 'second-attempt-2']);
    expect(differ.output).toContain('error: the two passwords differ; nothing changed');
    expect(differ.output).not.toMatch(/first-attempt-1|second-attempt-2/);
    expect(differ.code).toBe(1);

    const empty = await onTerminal(['user', 'add', 'hank'], ['']);
    expect(empty.output).toContain('error: no password given');
    expect(empty.code).toBe(1);
  });
});
