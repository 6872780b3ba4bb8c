/**
 * Which era a server speaks, read from its answer to a 2026-07-28 request (MCP 2026-07-28
 * Streamable HTTP §Backward Compatibility). Pure: the caller does the I/O.
 */

/** JSON-RPC codes only a 2026-07-28 server sends (MCP 2026-07-28 changelog, error code allocation). */
const HEADER_MISMATCH = -32020;
const MISSING_REQUIRED_CLIENT_CAPABILITY = -32021;
const UNSUPPORTED_PROTOCOL_VERSION = -32022;

export type StatelessAttemptOutcome =
  /** The server answered on this wire (or refused for a reason a fallback cannot fix): keep the response. */
  | { kind: 'answer' }
  /** An initialize-based server: run the handshake offering these versions, preferred first. */
  | { kind: 'fallback'; versions: string[] };

interface AttemptResponse {
  status: number;
  headers: Headers;
  body: unknown;
}

function rpcError(body: unknown): { code?: unknown; data?: unknown } | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const error = (body as { error?: unknown }).error;
  return typeof error === 'object' && error !== null ? (error as { code?: unknown; data?: unknown }) : undefined;
}

/**
 * Only a `400` can mean "another era". It does not when it carries a `WWW-Authenticate`
 * challenge (an RFC 6750 §3.1 `invalid_request` from the authorization layer, which the
 * handshake would meet again) or a JSON-RPC error only modern servers send: then the request
 * itself is wrong and the caller must see that response.
 */
export function classifyStatelessAttempt(response: AttemptResponse, offered: readonly string[]): StatelessAttemptOutcome {
  if (response.status !== 400) return { kind: 'answer' };
  if (response.headers.has('www-authenticate')) return { kind: 'answer' };
  const error = rpcError(response.body);
  if (error?.code === HEADER_MISMATCH || error?.code === MISSING_REQUIRED_CLIENT_CAPABILITY) return { kind: 'answer' };
  if (error?.code === UNSUPPORTED_PROTOCOL_VERSION) {
    const supported = (error.data as { supported?: unknown } | undefined)?.supported;
    if (!Array.isArray(supported)) return { kind: 'fallback', versions: [...offered] };
    const mutual = offered.filter((v) => supported.includes(v));
    return mutual.length ? { kind: 'fallback', versions: mutual } : { kind: 'answer' };
  }
  // SDK v1 answers `-32000 Unsupported protocol version` (stateless) or `No valid session ID`
  // (stateful): both are "initialize first".
  return { kind: 'fallback', versions: [...offered] };
}
