/**
 * What one authorized call sends on each of its attempts (the first, then the retries after a
 * refresh, an authorization or a step-up): fixed when the call starts, so every attempt carries
 * the same URL, method, headers and body, as `fetch(input, init)` would send them once.
 */
export interface OutgoingRequest {
  /** The URL as `new Request(input).url` gives it. */
  readonly url: string;
  /** The method, normalized as `fetch` does (`post` → `POST`). */
  readonly method: string;
  /** The caller's headers: each attempt sends a copy with its own `Authorization` (and `DPoP`). */
  readonly headers: Headers;
  readonly signal: AbortSignal | undefined;
  readonly redirect: RequestInit['redirect'];
  /**
   * The body each attempt sends (`undefined`: none): a string as given, bytes copied when the
   * call starts (the caller may reuse its buffer), anything else (a stream, a Blob, form data)
   * read once, on first use.
   */
  body(): Promise<string | ArrayBuffer | undefined>;
}

/**
 * The call `fetch(input, init)` describes. A URL with an `init` of method, headers, a string or
 * bytes body, signal and redirect (how the MCP SDK transports call fetch) is taken as it is: a
 * `Request`, with its body stream and its own `AbortSignal`, costs more than the rest of what
 * this client adds to a call. Anything else goes through `new Request(input, init)`, and so does
 * a call whose input `new Request` would refuse, so the caller gets its `TypeError`.
 */
export function outgoingRequest(input: string | URL | Request, init?: RequestInit): OutgoingRequest {
  return direct(input, init) ?? fromRequest(new Request(input, init), init);
}

/** The `init` members {@link direct} handles; any other (mode, credentials, duplex, …) needs a Request. */
const DIRECT_INIT = new Set(['method', 'headers', 'body', 'signal', 'redirect']);
/** Fetch §2.2.1 "normalize a method": these are upper-cased, any other method is kept as sent. */
const NORMALIZED_METHODS = new Set(['DELETE', 'GET', 'HEAD', 'OPTIONS', 'POST', 'PUT']);
/** RFC 9110 §9.1: a method is a token. */
const METHOD_TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const FORBIDDEN_METHODS = new Set(['CONNECT', 'TRACE', 'TRACK']);
const REDIRECT_MODES = new Set<unknown>(['follow', 'error', 'manual']);

function direct(input: string | URL | Request, init: RequestInit | undefined): OutgoingRequest | undefined {
  if (typeof input !== 'string' && !(input instanceof URL)) return undefined;
  if (init !== undefined) {
    for (const key of Object.keys(init)) if (!DIRECT_INIT.has(key)) return undefined;
  }
  const given = init?.body ?? undefined;
  const body = plainBody(given);
  if (given !== undefined && body === undefined) return undefined;
  const url = URL.parse(typeof input === 'string' ? input : input.href);
  if (url === null || url.username !== '' || url.password !== '') return undefined;
  const method = normalizedMethod(init?.method);
  if (method === undefined || ((method === 'GET' || method === 'HEAD') && body !== undefined)) return undefined;
  const signal = init?.signal ?? undefined;
  if (signal !== undefined && !(signal instanceof AbortSignal)) return undefined;
  const redirect = init?.redirect;
  if (redirect !== undefined && !REDIRECT_MODES.has(redirect)) return undefined;
  // validates names and values as new Request would, with the same TypeError
  const headers = new Headers(init?.headers);
  const sent = Promise.resolve(body);
  return { url: url.href, method, headers, signal, redirect, body: () => sent };
}

/** The method `new Request` would give, or `undefined` where it would throw. */
function normalizedMethod(method: string | undefined): string | undefined {
  if (method === undefined) return 'GET';
  if (!METHOD_TOKEN.test(method)) return undefined;
  const upper = method.toUpperCase();
  if (FORBIDDEN_METHODS.has(upper)) return undefined;
  return NORMALIZED_METHODS.has(upper) ? upper : method;
}

/**
 * A body that needs no stream read, as every attempt sends it: a string as it is (fetch encodes it
 * as UTF-8 and, without a content type, labels it `text/plain;charset=UTF-8`, as it would have),
 * bytes as a copy of exactly the view. `undefined`: none, or one of another kind.
 */
function plainBody(body: RequestInit['body'] | undefined): string | ArrayBuffer | undefined {
  if (body === undefined) return undefined;
  if (typeof body === 'string') return body;
  if (body instanceof ArrayBuffer) return body.slice(0);
  if (ArrayBuffer.isView(body)) return new Uint8Array(body.buffer, body.byteOffset, body.byteLength).slice().buffer;
  return undefined;
}

function fromRequest(request: Request, init: RequestInit | undefined): OutgoingRequest {
  // a plain body in init replaces the Request's own (as fetch does) and needs no stream read
  const plain = plainBody(init?.body ?? undefined);
  let read: Promise<string | ArrayBuffer | undefined> | undefined;
  return {
    url: request.url,
    method: request.method,
    headers: request.headers,
    signal: request.signal,
    redirect: request.redirect,
    body() {
      read ??= plain !== undefined || request.body === null ? Promise.resolve(plain) : request.arrayBuffer();
      return read;
    },
  };
}
