import { readFileSync } from 'node:fs';

/**
 * The version of @mcp-auth-kit/cli, read from its package.json at run time (src/ and dist/ are
 * both one level below it), so `--version` can never disagree with what is installed. The six
 * packages share one version (a fixed changeset group), so it is also the kit's.
 */
export function cliVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version?: unknown };
  return typeof pkg.version === 'string' ? pkg.version : 'unknown';
}
