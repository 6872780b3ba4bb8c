import { readFileSync } from 'node:fs';

/**
 * The kit's version, read from this package's package.json at run time (src/cli and dist/cli are
 * both two levels below it), so `--version` can never disagree with what is installed. The six
 * packages share one version (a fixed changeset group), so it is also `@mcp-auth-kit/cli`'s.
 */
export function cliVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: unknown };
  return typeof pkg.version === 'string' ? pkg.version : 'unknown';
}
