import { ERR, McpAuthError } from '../errors.js';
import type { ServerBinding } from '../store.js';
import { networkFailureReason } from '../unreachable.js';
import { serverKey } from '../url.js';
import { oauthChallenge } from '../www-authenticate.js';
import { sendWithTokens, type AuthFetchParts } from './auth-fetch.js';
import { outgoingRequest } from './outgoing-request.js';
import { nowSeconds } from './tokens.js';

/** What {@link McpAuthClient.checkAccess} learnt from the MCP server about the stored access token. */
export interface AccessCheck {
  server: string;
  resource?: string | undefined;
  issuer?: string | undefined;
  /**
   * - `valid`: the MCP server accepted the access token (it answered the request with something other than 401);
   * - `expired`: refused (401), and its `expires_at` has passed;
   * - `revoked`: refused (401) before its `expires_at`: revoked, or no longer trusted by the server;
   * - `no_tokens`: nothing stored (or a DPoP-bound token whose key is gone), nothing was sent;
   * - `unknown`: the server failed (5xx) before deciding.
   */
  result: 'valid' | 'expired' | 'revoked' | 'no_tokens' | 'unknown';
  /** HTTP status of the MCP server's answer. */
  status?: number | undefined;
  expires_at?: number | undefined;
  /** The refusal's `WWW-Authenticate` `error` / `error_description` (RFC 6750 §3), when there is one. */
  error?: string | undefined;
  error_description?: string | undefined;
}

/** The MCP version sent in the probe; a server that speaks another answers with its own (MCP lifecycle, version negotiation). */
const PROBE_PROTOCOL_VERSION = '2025-11-25';

/**
 * Asks the MCP server whether it accepts the stored access token, with the cheapest request every
 * MCP server answers: `initialize` (MCP lifecycle), carrying the token as every MCP request does
 * (MCP authorization, Token Requirements). Nothing is refreshed or authorized, so a check never
 * changes the tokens; a session the probe opened is ended with DELETE (Streamable HTTP §Session
 * Management). A server that does not answer is `SERVER_UNREACHABLE`.
 */
export async function checkAccess(parts: AuthFetchParts, serverUrl: string | URL): Promise<AccessCheck> {
  const server = serverKey(serverUrl);
  const binding = await parts.context.store.getServer(server);
  const tokens = binding ? await parts.keeper.storedTokens(binding) : undefined;
  if (!binding || !tokens || !(await parts.keeper.usable(tokens, binding))) {
    return { server, resource: binding?.resource, issuer: binding?.issuer, result: 'no_tokens' };
  }
  const base = { server, resource: binding.resource, issuer: binding.issuer, expires_at: tokens.expires_at };
  const res = await probe(parts, binding, tokens, server);
  await res.body?.cancel().catch(() => undefined);
  const sessionId = res.headers.get('mcp-session-id');
  if (res.ok && sessionId) {
    const end = outgoingRequest(server, { method: 'DELETE', headers: { 'mcp-session-id': sessionId } });
    await sendWithTokens(parts, binding, tokens, end)
      .then((r) => r.body?.cancel())
      .catch(() => undefined);
  }
  if (res.status === 401) {
    const challenge = oauthChallenge(res);
    const expired = tokens.expires_at !== undefined && tokens.expires_at <= nowSeconds();
    return {
      ...base,
      result: expired ? 'expired' : 'revoked',
      status: 401,
      ...(challenge?.params.error !== undefined && { error: challenge.params.error }),
      ...(challenge?.params.error_description !== undefined && { error_description: challenge.params.error_description }),
    };
  }
  return { ...base, result: res.status >= 500 ? 'unknown' : 'valid', status: res.status };
}

async function probe(parts: AuthFetchParts, binding: ServerBinding, tokens: Parameters<typeof sendWithTokens>[2], server: string) {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: PROBE_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'mcp-auth-kit status check', version: '1' } },
  });
  const request = outgoingRequest(server, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body,
  });
  try {
    return await sendWithTokens(parts, binding, tokens, request);
  } catch (err) {
    const reason = networkFailureReason(err);
    if (!reason) throw err;
    throw new McpAuthError(ERR.SERVER_UNREACHABLE, `the MCP server at ${server} did not answer (${reason})`, { cause: err });
  }
}
