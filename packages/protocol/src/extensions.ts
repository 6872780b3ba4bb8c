/**
 * Identifiers of the official MCP authorization extensions (spec/extensions/auth-overview.mdx) and
 * the negotiation keys they use: clients declare the extensions they use in each request's
 * `_meta["io.modelcontextprotocol/clientCapabilities"].extensions`; servers advertise theirs in
 * the `capabilities.extensions` of `server/discover`. One place, so the client, the CLI, the
 * resource server, the AS and the testing kit never spell them differently.
 */
export const OAUTH_CLIENT_CREDENTIALS_EXTENSION = 'io.modelcontextprotocol/oauth-client-credentials';
export const ENTERPRISE_MANAGED_AUTHORIZATION_EXTENSION = 'io.modelcontextprotocol/enterprise-managed-authorization';
export const AUTH_EXTENSIONS = [OAUTH_CLIENT_CREDENTIALS_EXTENSION, ENTERPRISE_MANAGED_AUTHORIZATION_EXTENSION] as const;
export type AuthExtension = (typeof AUTH_EXTENSIONS)[number];

/** The `_meta` key under which a 2026-07-28 client declares its capabilities per request. */
export const CLIENT_CAPABILITIES_META_KEY = 'io.modelcontextprotocol/clientCapabilities';

export function isAuthExtension(value: unknown): value is AuthExtension {
  return typeof value === 'string' && (AUTH_EXTENSIONS as readonly string[]).includes(value);
}
