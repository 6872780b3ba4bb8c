/**
 * Why a request got no HTTP answer at all, read from what `fetch` threw: Node's fetch rejects
 * with `TypeError('fetch failed')` and puts the socket or DNS error (with its `code`) in `cause`.
 * Undefined when the error is not a network failure (the caller then reports it as it is).
 * Used so that "nobody answered" is never reported as "answered without metadata".
 */
export function networkFailureReason(err: unknown): string | undefined {
  let e: unknown = err;
  for (let depth = 0; e && typeof e === 'object' && depth < 6; depth++) {
    const { code, name } = e as { code?: unknown; name?: unknown };
    if (typeof code === 'string') {
      const known = REASONS[code];
      if (known) return known;
      if (/CERT|TLS|SSL/.test(code)) return `TLS failed: ${code}`;
      if (/^E[A-Z]+$/.test(code)) return code;
    }
    if (name === 'TimeoutError') return 'timed out';
    if (name === 'ConnectTimeoutError') return 'connection timed out';
    e = (e as { cause?: unknown }).cause;
  }
  if (err instanceof TypeError && err.message === 'fetch failed') return 'network error';
  return undefined;
}

const REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ETIMEDOUT: 'timed out',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
  UND_ERR_HEADERS_TIMEOUT: 'no response in time',
  UND_ERR_BODY_TIMEOUT: 'response stalled',
  UND_ERR_SOCKET: 'connection closed',
  ENOTFOUND: 'host name not found',
  EAI_AGAIN: 'DNS lookup failed',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  EPIPE: 'connection closed',
};
