import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { walkSources } from '@mcp-auth-kit/test-utils';

/**
 * The grant-type inventory the per-grant attack tables are held to (sender-constraint,
 * grant-index): what the AS advertises, and where the AS sources register a grant of their own.
 */

/** RFC 8414 `grant_types_supported` of the running AS. */
export async function advertisedGrantTypes(issuer: string): Promise<string[]> {
  const metadata = (await (await fetch(`${issuer}/.well-known/oauth-authorization-server`)).json()) as {
    grant_types_supported?: string[];
  };
  return metadata.grant_types_supported ?? [];
}

/** The authorization server's sources, path relative to its `src/`. */
export function authorizationServerSources(): { path: string; text: string }[] {
  const root = join(import.meta.dirname, '..', '..', '..', 'packages', 'authorization-server', 'src');
  return walkSources(root, { keep: (path) => path.endsWith('.ts') }).map((path) => ({
    path: relative(root, path),
    text: readFileSync(path, 'utf8'),
  }));
}

/** Files that register a grant type on oidc-provider's public API (`registerGrantType`). */
export function grantRegisteringSources(): string[] {
  return authorizationServerSources()
    .filter((f) => /\.registerGrantType\(/.test(f.text))
    .map((f) => f.path)
    .sort();
}

/**
 * The files that register a grant of their own, as the per-grant guards expect them: a grant added
 * in another file fails those guards until its rows exist and it is listed here.
 */
export const REGISTERED_GRANT_SOURCES: readonly string[] = ['grants/jwt-bearer/grant.ts', 'grants/token-exchange/grant.ts'];
