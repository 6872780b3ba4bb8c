import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBrowser, writeRedirectPage } from '../src/browser.js';

/**
 * Issue 46 item 3: the authorization URL (state, PKCE challenge, redirect URI) must not be in the
 * opener's argv, which every local user can read (/proc/<pid>/cmdline): with it another local
 * account could sign in with its own account and deliver that code first (RFC 8252 §8.3, §8.9).
 * The opener is a fake `xdg-open` found on PATH (the environment the CLI passes to the opener),
 * recording its arguments and what the path it was given holds. Nothing leaves the machine.
 */
const AUTH_URL = new URL(
  'http://127.0.0.1:9/authorize?response_type=code&client_id=c&state=STATE-abc123&code_challenge=CHALLENGE-xyz&redirect_uri=http%3A%2F%2F127.0.0.1%3A4567%2Fcallback',
);

describe.skipIf(process.platform === 'win32')('the browser opener gets a private page, not the authorization URL', () => {
  let bin: string;
  let log: string;

  beforeAll(async () => {
    bin = await mkdtemp(join(tmpdir(), 'mak-opener-'));
    log = join(bin, 'log');
    const script = [
      '#!/bin/sh',
      `printf '%s\\n' "$@" > '${log}.args'`,
      `cat "$1" > '${log}.page'`,
      `stat -c '%a' "$1" > '${log}.mode'`,
      `stat -c '%a' "$(dirname "$1")" > '${log}.dirmode'`,
      'exit 0',
      '',
    ].join('\n');
    for (const name of ['xdg-open', 'open']) {
      await writeFile(join(bin, name), script);
      await chmod(join(bin, name), 0o755);
    }
  });
  afterAll(async () => {
    if (bin) await rm(bin, { recursive: true, force: true });
  });

  it('argv holds a file path only; the file (0600, in a 0700 folder) sends the browser on to the URL', async () => {
    const platform = process.platform === 'darwin' ? 'darwin' : 'linux';
    expect(await openBrowser(AUTH_URL, platform, { ...process.env, PATH: `${bin}:/usr/bin:/bin` })).toBe(true);
    const args = readFileSync(`${log}.args`, 'utf8').trim().split('\n');
    expect(args).toHaveLength(1);
    for (const secret of ['STATE-abc123', 'CHALLENGE-xyz', 'authorize', '4567', '127.0.0.1']) expect(args[0]).not.toContain(secret);
    expect(args[0]).toMatch(/sign-in\.html$/);
    const page = readFileSync(`${log}.page`, 'utf8');
    const escaped = AUTH_URL.href.replace(/&/g, '&amp;');
    expect(page).toContain(`<meta http-equiv="refresh" content="0;url=${escaped}">`);
    expect(page).toContain(`<a href="${escaped}">`);
    expect(readFileSync(`${log}.mode`, 'utf8').trim()).toBe('600');
    expect(readFileSync(`${log}.dirmode`, 'utf8').trim()).toBe('700');
  });

  it('the page is removed with its folder (at exit, or at once when no opener started)', async () => {
    const page = writeRedirectPage(AUTH_URL);
    expect(existsSync(page.path)).toBe(true);
    expect(statSync(page.path).mode & 0o777).toBe(0o600);
    page.remove();
    expect(existsSync(dirname(page.path))).toBe(false);
    const pages = () =>
      readdirSync(tmpdir())
        .filter((n) => n.startsWith('mcp-auth-kit-open-'))
        .sort();
    const before = pages();
    expect(await openBrowser(AUTH_URL, 'linux', { ...process.env, PATH: join(bin, 'nothing-here') })).toBe(false);
    expect(pages()).toEqual(before);
  });
});
