/**
 * Advertising the MCP authorization extensions a server's authorization server supports, in the
 * server's capabilities (spec/extensions/auth-overview.mdx: "servers advertise theirs in the
 * capabilities returned by `server/discover`"; the client credentials page: "include the
 * extension in the `server/discover` response" under `capabilities.extensions`). The SDKs put
 * the capabilities a server registers in `server/discover` (2026-07-28) and in the `initialize`
 * result (2025-11-25), so one call serves both wires. Structural: no MCP SDK import.
 */
import { ENTERPRISE_MANAGED_AUTHORIZATION_EXTENSION, OAUTH_CLIENT_CREDENTIALS_EXTENSION } from '@mcp-auth-kit/protocol';

/** Which authorization extensions to advertise (each is `{}` in `capabilities.extensions`: the pages define no settings). */
export interface AuthExtensionsOptions {
  /** `io.modelcontextprotocol/oauth-client-credentials`: machine clients (client secret or JWT assertion). */
  clientCredentials?: boolean;
  /** `io.modelcontextprotocol/enterprise-managed-authorization`: ID-JAGs from an enterprise IdP. */
  enterpriseManagedAuthorization?: boolean;
}

/** The `capabilities` fragment that advertises them: `{ extensions: { "<identifier>": {} } }`. */
export function authExtensionCapabilities(options: AuthExtensionsOptions): { extensions: Record<string, Record<string, never>> } {
  const extensions: Record<string, Record<string, never>> = {};
  if (options.clientCredentials) extensions[OAUTH_CLIENT_CREDENTIALS_EXTENSION] = {};
  if (options.enterpriseManagedAuthorization) extensions[ENTERPRISE_MANAGED_AUTHORIZATION_EXTENSION] = {};
  return { extensions };
}

/** A low-level MCP `Server` (SDK v1 or v2), or anything else that takes capabilities before it connects. */
export interface CapabilityRegistrar {
  registerCapabilities(capabilities: { extensions?: Record<string, object> }): void;
}

/**
 * Adds the extensions to `server`'s capabilities: an SDK v1 or v2 `McpServer` (through its
 * `server`) or low-level `Server`. Call it before the server connects (the SDKs refuse later);
 * capabilities registered elsewhere, other extensions included, are kept (the SDKs merge).
 *
 * @throws TypeError when `server` takes no capabilities.
 */
export function advertiseAuthExtensions(
  server: CapabilityRegistrar | { server: CapabilityRegistrar },
  options: AuthExtensionsOptions,
): void {
  const target = 'registerCapabilities' in server ? server : server.server;
  if (typeof target?.registerCapabilities !== 'function')
    throw new TypeError('advertiseAuthExtensions: expected an MCP McpServer or Server (registerCapabilities)');
  const capabilities = authExtensionCapabilities(options);
  if (Object.keys(capabilities.extensions).length) target.registerCapabilities(capabilities);
}
