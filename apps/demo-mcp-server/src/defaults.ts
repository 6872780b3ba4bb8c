/**
 * Every default of the demo MCP server in one place: what `createDemoApp`, `startDemoServer` and
 * the notes stores use when an option is left out, and what the process (main.ts) uses when an
 * environment variable is unset. The rest of the app reads these instead of restating a literal.
 */
import type { AuthExtensionsOptions } from '@mcp-auth-kit/resource-server/core';
import { DEFAULT_REVOCATION_PREFIX } from '@mcp-auth-kit/protocol';
import { SCOPES_SUPPORTED } from './scopes.js';

export const DEMO_DEFAULTS = Object.freeze({
  /** TCP port (`MCP_PORT`). */
  port: 3000,
  /** Loopback only; `::1` is skipped where the host has no IPv6 loopback. */
  hosts: Object.freeze(['127.0.0.1', '::1']) as readonly string[],
  /** Canonical resource URI for the port actually bound (`MCP_RESOURCE`). */
  resource: (port: number): string => `http://localhost:${port}/mcp`,
  /** Open SSE streams never end by themselves: without a grace period, connections are cut at once. */
  shutdownTimeoutMs: 0,
  /** RFC 9449 DPoP-bound and Bearer tokens are both accepted. */
  dpop: true as const,
  /** The minimal set for basic functionality; `notes:write` comes by step-up. */
  scopesSupported: SCOPES_SUPPORTED,
  /** Our AS always has the client credentials extension. */
  authExtensions: Object.freeze({ clientCredentials: true }) as AuthExtensionsOptions,
  /** Bytes of the per-process key of the `list_notes` cursors (one replica). */
  stateSecretBytes: 32,
  /** Notes kept per subject (demo memory guard). */
  maxNotesPerSubject: 100,
  /** Key and channel prefix in Redis: the same as the AS's, so revocations reach this server. */
  redisPrefix: DEFAULT_REVOCATION_PREFIX,
});

/** What main.ts uses when the environment leaves a setting unset (runtime contract). */
export const PROCESS_DEFAULTS = Object.freeze({
  /** `AS_ISSUER`: the auth-server app's own default address. */
  issuer: 'http://localhost:9000',
  /** `SHUTDOWN_TIMEOUT_MS`: in-flight requests get a few seconds on SIGTERM. */
  shutdownTimeoutMs: 3000,
});
