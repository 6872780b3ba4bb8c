import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { walkSources } from '@mcp-auth-kit/test-utils';
import { expect } from 'vitest';
import { JWT_BEARER } from '../../helpers/clients.js';
import { TOKEN_EXCHANGE } from './third-party-flow.js';

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

/** Every grant type the kit has (ID-JAG and the token exchange too): the whole inventory. */
export const EVERY_GRANT_TYPE: readonly string[] = [
  'authorization_code',
  'refresh_token',
  'client_credentials',
  JWT_BEARER,
  TOKEN_EXCHANGE,
];

/** What the running AS advertises, once checked to hold every grant type of the kit. */
export async function advertisedGrantInventory(issuer: string): Promise<string[]> {
  const advertised = await advertisedGrantTypes(issuer);
  expect(advertised).toEqual(expect.arrayContaining([...EVERY_GRANT_TYPE]));
  return advertised;
}

/** Checks that the files which register a grant of their own are the listed ones (REGISTERED_GRANT_SOURCES). */
export function expectListedGrantRegistrations(): void {
  expect(grantRegisteringSources()).toEqual(REGISTERED_GRANT_SOURCES);
}
