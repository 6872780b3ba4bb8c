import { spawn } from 'node:child_process';

/**
 * Opens a URL in the user's browser without a shell (Security Best Practices: never open
 * authorization URLs via shell commands). Resolves false when no opener could be started.
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
        child.unref();
        resolve(true);
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
