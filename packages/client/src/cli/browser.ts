import { spawn } from 'node:child_process';

/** How long an opener gets to fail before it counts as started (xdg-open exits 3 at once when it finds no browser). */
const OPENER_GRACE_MS = 1500;

/**
 * Opens a URL in the user's browser without a shell (Security Best Practices: never open
 * authorization URLs via shell commands). Resolves false when no opener could be started or it
 * failed at once (non-zero exit), so the CLI can say so.
 */
export function openBrowser(url: URL, platform: NodeJS.Platform = process.platform): Promise<boolean> {
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return Promise.resolve(false);
  const [cmd, args] =
    platform === 'darwin'
      ? ['open', [url.href]]
      : platform === 'win32'
        ? ['rundll32', ['url.dll,FileProtocolHandler', url.href]]
        : ['xdg-open', [url.href]];
  return new Promise((resolve) => {
    try {
      const child = spawn(cmd, args as string[], { stdio: 'ignore', detached: true, shell: false });
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
}

/** CI runners set CI (GitHub, GitLab, CircleCI, Travis …). */
export function inCi(env: NodeJS.ProcessEnv = process.env): boolean {
  return !!env.CI && env.CI !== 'false' && env.CI !== '0';
}
