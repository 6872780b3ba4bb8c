import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { escapeHtml } from '@mcp-auth-kit/protocol';

/** How long an opener gets to fail before it counts as started (xdg-open exits 3 at once when it finds no browser). */
const OPENER_GRACE_MS = 1500;

/**
 * A page that sends the browser on to `url`, in a directory only this user can read (0700, the
 * file 0600), removed when the process exits. The opener gets this file's path, not the
 * authorization URL: a process's arguments are readable by every local user (`/proc/<pid>/cmdline`,
 * `ps`), and with the `state`, PKCE challenge and redirect URI another local user could complete
 * the sign-in with an account of their own and deliver that code first (RFC 8252 §8.3, §8.9).
 */
export function writeRedirectPage(url: URL, dir: string = tmpdir()): { path: string; remove: () => void } {
  const folder = mkdtempSync(join(dir, 'mcp-auth-kit-open-'));
  const path = join(folder, 'sign-in.html');
  const href = escapeHtml(url.href);
  writeFileSync(
    path,
    '<!doctype html><html><head><meta charset="utf-8"><meta name="referrer" content="no-referrer">' +
      `<meta http-equiv="refresh" content="0;url=${href}"><title>Sign in</title></head>` +
      `<body><p><a href="${href}">Continue to sign in</a></p></body></html>\n`,
    { mode: 0o600, flag: 'wx' },
  );
  let removed = false;
  const remove = () => {
    if (removed) return;
    removed = true;
    process.off('exit', remove);
    rmSync(folder, { recursive: true, force: true });
  };
  process.once('exit', remove);
  return { path, remove };
}

/**
 * Opens a URL in the user's browser without a shell (Security Best Practices: never open
 * authorization URLs via shell commands), through {@link writeRedirectPage}: the opener's
 * arguments hold a file path only. Resolves false when no opener could be started or it failed at
 * once (non-zero exit), so the CLI can say so. `env` is the opener's environment (its PATH).
 */
export async function openBrowser(
  url: URL,
  platform: NodeJS.Platform = process.platform,
  env: NodeJS.ProcessEnv = process.env,
): Promise<boolean> {
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return false;
  let page: ReturnType<typeof writeRedirectPage>;
  try {
    page = writeRedirectPage(url);
  } catch {
    return false;
  }
  const [cmd, args] =
    platform === 'darwin'
      ? ['open', [page.path]]
      : platform === 'win32'
        ? ['rundll32', ['url.dll,FileProtocolHandler', page.path]]
        : ['xdg-open', [page.path]];
  const opened = await new Promise<boolean>((resolve) => {
    try {
      const child = spawn(cmd, args as string[], { stdio: 'ignore', detached: true, shell: false, env });
      child.once('error', () => resolve(false));
      child.once('spawn', () => {
        const timer = setTimeout(() => {
          child.unref();
          resolve(true);
        }, OPENER_GRACE_MS);
        timer.unref();
        child.once('exit', (code) => {
          clearTimeout(timer);
          resolve(code === 0);
        });
      });
    } catch {
      resolve(false);
    }
  });
  if (!opened) page.remove();
  return opened;
}

/** CI runners set CI (GitHub, GitLab, CircleCI, Travis …). */
export function inCi(env: NodeJS.ProcessEnv = process.env): boolean {
  return !!env.CI && env.CI !== 'false' && env.CI !== '0';
}
