/**
 * One MCP request with or without a bearer token, on whichever wire the server speaks: enough
 * to test a protected endpoint without an MCP client. The response is the answer to the request
 * itself; when the server needed the 2025-era handshake first, `exchanges` lists it.
 */
import { classifyStatelessAttempt } from './mcp-negotiation.js';
import { CONNECTION_DEFAULTS, initializeHandshake, statelessSession, type McpConnectionOptions } from './mcp-session.js';
import { isStatelessWire, LEGACY_PROTOCOL_VERSIONS, MCP_PROTOCOL_VERSION, type McpExchange, type McpResponse } from './mcp-wire.js';

export interface McpRequestOptions extends McpConnectionOptions {
  method: string;
  params?: Record<string, unknown>;
}

/**
 * Sends `method` (MCP 2026-07-28 Streamable HTTP §Backward Compatibility): first on the
 * 2026-07-28 wire; when the server answers like an initialize-based server (a `400` without a
 * challenge or a 2026-only error code), runs `initialize` → `notifications/initialized` → the
 * request, then ends the session it got, if any. A refusal on the way (401, 403, …) is returned
 * as is, so the challenge assertions see it.
 */
export async function mcpRequest(url: string, o: McpRequestOptions): Promise<McpResponse> {
  const version = o.protocolVersion ?? CONNECTION_DEFAULTS.protocolVersion;
  const request = { method: o.method, ...(o.params && { params: o.params }) };
  let versions: readonly string[] = [version];
  const log: McpExchange[] = [];
  if (version === 'auto' || isStatelessWire(version)) {
    const attempt = await statelessSession(url, o, version === 'auto' ? MCP_PROTOCOL_VERSION : version).request(request);
    if (version !== 'auto') return attempt;
    const outcome = classifyStatelessAttempt(attempt, LEGACY_PROTOCOL_VERSIONS);
    if (outcome.kind === 'answer') return attempt;
    log.push(...attempt.exchanges);
    versions = outcome.versions;
  }
  const handshake = await initializeHandshake(url, o, versions, version !== 'auto', log);
  if (!handshake.ok) return handshake.response;
  try {
    return await handshake.session.request(request);
  } finally {
    await handshake.session.close();
  }
}

/** `tools/call` for `name` (`Mcp-Name` set on the 2026-07-28 wire); the result is in `body.result`. */
export function callTool(
  url: string,
  o: McpConnectionOptions & { name: string; arguments?: Record<string, unknown> },
): Promise<McpResponse> {
  const { name, arguments: args, ...connection } = o;
  return mcpRequest(url, { ...connection, method: 'tools/call', params: { name, arguments: args ?? {} } });
}
