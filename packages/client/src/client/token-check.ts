import { ERR, McpAuthError } from '../errors.js';
import type { ServerBinding } from '../store.js';
import { networkFailureReason } from '../unreachable.js';
import { serverKey } from '../url.js';
import { oauthChallenge } from '../www-authenticate.js';
import { sendWithTokens, type AuthFetchParts } from './auth-fetch.js';
import { outgoingRequest } from './outgoing-request.js';
import { declaringRequest } from './extension-declarations.js';
import { CLIENT_CAPABILITIES_META_KEY } from '@mcp-auth-kit/protocol';
import { nowSeconds } from './tokens.js';

/** What {@link McpAuthClient.checkAccess} learnt from the MCP server about the stored access token. */
export interface AccessCheck {
  server: string;
  resource?: string | undefined;
  issuer?: string | undefined;
  /**
   * - `valid`: the MCP server accepted the access token (2xx, or 403: the token is good, its scope is not);
   * - `expired`: refused (401), and its `expires_at` has passed;
   * - `revoked`: refused (401) before its `expires_at`: revoked, or no longer trusted by the server;
   * - `no_tokens`: nothing stored (or a DPoP-bound token whose key is gone), nothing was sent;
   * - `unknown`: the server answered without deciding on the token (5xx, or a 4xx other than 401 / 403).
   */
  result: 'valid' | 'expired' | 'revoked' | 'no_tokens' | 'unknown';
  /** HTTP status of the MCP server's answer. */
  status?: number | undefined;
  /** The MCP revision the server accepted the probe in: `2026-07-28` (`server/discover`) or `2025-11-25` (`initialize`). */
  protocolVersion?: string | undefined;
  expires_at?: number | undefined;
  /** The refusal's `WWW-Authenticate` `error` / `error_description` (RFC 6750 §3), when there is one. */
  error?: string | undefined;
  error_description?: string | undefined;
}

/** The revisions the probe speaks, newest first (MCP 2026-07-28 changelog item 3; 2025-11-25 lifecycle). */
const DISCOVER_VERSION = '2026-07-28';
const INITIALIZE_VERSION = '2025-11-25';
const CLIENT_INFO = { name: 'mcp-auth-kit status check', version: '1' };

/**
 * Asks the MCP server whether it accepts the stored access token, in the revision the server
 * speaks, carrying the token as every MCP request does (MCP authorization, Token Requirements):
 * first the 2026-07-28 `server/discover` (which such a server MUST implement); when the server
 * answers that with 400, 404 or 405 (a 2025-11-25 server: no such method, or no such version),
 * the 2025-11-25 `initialize`. Only an answer that shows the request got past the token check —
 * 2xx, or 403 (the token is good, its scope is not) — is `valid`; any other status says nothing
 * about the token (`unknown`). Nothing is refreshed or authorized, so a check never changes the
 * tokens; a session the 2025 probe opened is ended with DELETE (Streamable HTTP §Session
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
  let protocolVersion = DISCOVER_VERSION;
  let res = await probe(parts, binding, tokens, server, discoverRequest());
  if (NOT_THIS_REVISION.has(res.status)) {
    await res.body?.cancel().catch(() => undefined);
    protocolVersion = INITIALIZE_VERSION;
    res = await probe(parts, binding, tokens, server, initializeRequest());
  }
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
  const accepted = res.ok || res.status === 403;
  return { ...base, result: accepted ? 'valid' : 'unknown', status: res.status, ...(accepted && { protocolVersion }) };
}

/** Answers of a server to a revision it does not speak (2026-07-28 transport: 400 unsupported version, 404 method not found; 405 a GET-only endpoint). */
const NOT_THIS_REVISION = new Set([400, 404, 405]);

function discoverRequest(): RequestInit {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'server/discover',
    params: {
      _meta: {
        'io.modelcontextprotocol/protocolVersion': DISCOVER_VERSION,
        [CLIENT_CAPABILITIES_META_KEY]: {},
        'io.modelcontextprotocol/clientInfo': CLIENT_INFO,
      },
    },
  });
  // 2026-07-28 Streamable HTTP §Request Metadata: the version and the method mirrored in headers
  return { method: 'POST', headers: { ...JSON_HEADERS, 'mcp-protocol-version': DISCOVER_VERSION, 'mcp-method': 'server/discover' }, body };
}

function initializeRequest(): RequestInit {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: INITIALIZE_VERSION, capabilities: {}, clientInfo: CLIENT_INFO },
  });
  return { method: 'POST', headers: JSON_HEADERS, body };
}

const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

async function probe(
  parts: AuthFetchParts,
  binding: ServerBinding,
  tokens: Parameters<typeof sendWithTokens>[2],
  server: string,
  init: RequestInit,
) {
  // a request of this client like any other: the extensions it uses are declared (2026-07-28)
  const request = declaringRequest(outgoingRequest(server, init), parts.context.extensions);
  try {
    return await sendWithTokens(parts, binding, tokens, request);
  } catch (err) {
    const reason = networkFailureReason(err);
    if (!reason) throw err;
    throw new McpAuthError(ERR.SERVER_UNREACHABLE, `the MCP server at ${server} did not answer (${reason})`, { cause: err });
  }
}
