import { allowsEveryAddress, egressRefusal, type EgressPolicy } from '@mcp-auth-kit/protocol';
import { ERR, McpAuthError } from './errors.js';
import { assertAllowedUrl, type UrlPolicy } from './url.js';
import { assertEgressAllowed, egressDispatcher, egressRefusalMessage, type Resolver } from './network.js';
import { DEFAULTS } from './config/defaults.js';

export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/**
 * Bounds of every request the client sends (issue 46 item 2 and 5): a server that trickles its
 * answer, never sends headers, or sends an endless body cannot hold or fill the client.
 */
export interface RequestLimits {
  /**
   * OAuth requests (metadata, registration, token, revocation): the whole exchange, headers and
   * body, ends within this many ms. Requests to the MCP server: its response headers arrive
   * within it (the body is a stream the caller reads and bounds, e.g. the MCP SDK's request timeout).
   */
  timeoutMs: number;
  /** OAuth responses larger than this many bytes are refused (read incrementally, never buffered past it). */
  maxResponseBytes: number;
  /**
   * One MCP message larger than this many bytes is refused: a JSON response body, or one event
   * of an SSE stream (the stream itself may stay open for ever; each event is bounded).
   */
  maxMessageBytes: number;
}

/** 30 s per request; 1 MiB per OAuth response (real metadata and token responses are a few KiB); 8 MiB per MCP message. */
export const DEFAULT_REQUEST_LIMITS: Readonly<RequestLimits> = Object.freeze({
  timeoutMs: DEFAULTS.requestTimeoutMs,
  maxResponseBytes: DEFAULTS.maxResponseBytes,
  maxMessageBytes: DEFAULTS.maxMessageBytes,
});

export interface HttpDeps extends UrlPolicy {
  fetch: FetchLike;
  /** Overrides of {@link DEFAULT_REQUEST_LIMITS}. */
  limits?: Partial<RequestLimits> | undefined;
  /**
   * Addresses OAuth-related requests may reach (the protocol egress policy, checked before the
   * request and again on the address connected to). Undefined: no address restriction, for
   * endpoints the caller configured itself; {@link McpAuthClient} always sets it.
   */
  egress?: EgressPolicy | undefined;
  /** DNS resolver for the egress checks (tests). */
  resolve?: Resolver;
}

function restricted(deps: HttpDeps): EgressPolicy | undefined {
  return deps.egress && !allowsEveryAddress(deps.egress) ? deps.egress : undefined;
}

async function checkTarget(url: URL, what: string, deps: HttpDeps): Promise<URL> {
  const checked = assertAllowedUrl(url, what, deps);
  const policy = restricted(deps);
  if (policy) await assertEgressAllowed(checked, policy, what, deps.resolve);
  return checked;
}

/**
 * The one way OAuth-related requests leave the client: `deps.fetch` with the egress dispatcher,
 * so the connection goes only to an address the policy allows. A refusal at connect time (the
 * name answered differently than at the check) becomes URL_FORBIDDEN like the early check.
 */
async function egressFetch(input: string | URL | Request, init: RequestInit, deps: HttpDeps, what: string): Promise<Response> {
  const policy = restricted(deps);
  const dispatcher = policy && egressDispatcher(policy, deps.resolve);
  const options = dispatcher ? ({ ...init, dispatcher } as RequestInit) : init;
  try {
    return await limitedFetch(deps, input, options, what, 'whole');
  } catch (err) {
    const refusal = egressRefusal(err);
    if (refusal) throw new McpAuthError(ERR.URL_FORBIDDEN, egressRefusalMessage(what, refusal.reason), { cause: err });
    throw err;
  }
}

/** The limits in force for `deps`: each one given, else its default. */
export function requestLimits(deps: Pick<HttpDeps, 'limits'>): RequestLimits {
  const given = deps.limits ?? {};
  const pick = (value: number | undefined, fallback: number) =>
    value !== undefined && Number.isFinite(value) && value > 0 ? value : fallback;
  return {
    timeoutMs: pick(given.timeoutMs, DEFAULT_REQUEST_LIMITS.timeoutMs),
    maxResponseBytes: pick(given.maxResponseBytes, DEFAULT_REQUEST_LIMITS.maxResponseBytes),
    maxMessageBytes: pick(given.maxMessageBytes, DEFAULT_REQUEST_LIMITS.maxMessageBytes),
  };
}

function originOf(input: string | URL | Request): string {
  try {
    return new URL(input instanceof Request ? input.url : String(input)).origin;
  } catch {
    return 'the server';
  }
}

/** `text/event-stream`, whatever its parameters and case (RFC 9110 §8.3.1). */
function isEventStream(res: Response): boolean {
  return (res.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase() === 'text/event-stream';
}

/**
 * The one place a request of the client reaches `deps.fetch`, with its deadline and size bound.
 * `scope`:
 * - `whole`: headers and the whole body within `timeoutMs`, the body at most `maxResponseBytes`
 *   (OAuth requests: their answers are small documents read at once);
 * - `message`: requests to the MCP server. The response headers within `timeoutMs`; a JSON (or
 *   other non-SSE) body is one message: whole within `timeoutMs`, at most `maxMessageBytes`; an
 *   SSE stream may rightly stay open, so only each of its events is bounded by `maxMessageBytes`.
 * A request past its deadline or size fails with an {@link McpAuthError} naming the server.
 */
async function limitedFetch(
  deps: HttpDeps,
  input: string | URL | Request,
  init: RequestInit,
  what: string,
  scope: 'whole' | 'message',
): Promise<Response> {
  const limits = requestLimits(deps);
  const { timeoutMs } = limits;
  const seconds = Math.round(timeoutMs / 100) / 10;
  const origin = originOf(input);
  const deadline = new AbortController();
  let headersCame = false;
  const timer = setTimeout(() => {
    const part = scope === 'whole' || headersCame ? 'no complete answer' : 'no response headers';
    deadline.abort(new McpAuthError(ERR.SERVER_UNREACHABLE, `${what} at ${origin} did not answer in time (${part} within ${seconds} s)`));
  }, timeoutMs);
  // never what keeps a process alive: the deadline only matters to a request still waited for
  timer.unref?.();
  const signal = init.signal ? AbortSignal.any([init.signal, deadline.signal]) : deadline.signal;
  let res: Response;
  try {
    res = await deps.fetch(input, { ...init, signal });
  } catch (err) {
    clearTimeout(timer);
    // the fetch implementation may reject with its own abort error: the deadline's is the one to report
    if (deadline.signal.aborted && !init.signal?.aborted) throw deadline.signal.reason;
    throw err;
  }
  headersCame = true;
  const stream = scope === 'message' && isEventStream(res);
  const max = scope === 'whole' ? limits.maxResponseBytes : limits.maxMessageBytes;
  const tooLarge = () =>
    new McpAuthError(
      ERR.RESPONSE_TOO_LARGE,
      `${what} at ${origin} sent a ${stream ? 'stream event' : 'response'} larger than ${max} bytes; refused`,
    );
  const length = Number(res.headers.get('content-length'));
  if (!stream && Number.isFinite(length) && length > max) {
    clearTimeout(timer);
    await res.body?.cancel().catch(() => undefined);
    throw tooLarge();
  }
  if (!res.body || NULL_BODY_STATUSES.has(res.status)) {
    clearTimeout(timer);
    return res;
  }
  if (stream) clearTimeout(timer);
  const body = stream
    ? eventBoundedBody(res.body, max, tooLarge)
    : boundedBody(res.body, max, tooLarge, deadline.signal, () => clearTimeout(timer));
  return new Response(body, {
    status: res.status,
    statusText: res.statusText,
    headers: res.headers,
  });
}

/** Fetch §2.2.3 null body statuses: a Response with one of these cannot be given a body. */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/**
 * The next chunk of `reader` for `controller`; undefined once the stream ended (`controller`
 * closed) or reading failed (`controller` errored with `failure(err)`), `settle` called first in both.
 */
async function nextChunk(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  controller: ReadableStreamDefaultController<Uint8Array>,
  failure: (err: unknown) => unknown,
  settle: () => void = () => undefined,
): Promise<Uint8Array | undefined> {
  let chunk: Awaited<ReturnType<typeof reader.read>>;
  try {
    chunk = await reader.read();
  } catch (err) {
    settle();
    controller.error(failure(err));
    return undefined;
  }
  if (chunk.done) {
    settle();
    controller.close();
    return undefined;
  }
  return chunk.value;
}

/**
 * `body` read as the consumer pulls it, failing once more than `max` bytes came or the deadline
 * passed (the signal's reason, an McpAuthError, rather than the fetch's own abort error).
 */
function boundedBody(
  body: ReadableStream<Uint8Array>,
  max: number,
  tooLarge: () => Error,
  deadline: AbortSignal,
  done: () => void,
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let seen = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const value = await nextChunk(reader, controller, (err) => (deadline.aborted ? deadline.reason : err), done);
      if (!value) return;
      seen += value.byteLength;
      if (seen > max) {
        done();
        await reader.cancel().catch(() => undefined);
        controller.error(tooLarge());
        return;
      }
      controller.enqueue(value);
    },
    async cancel(reason) {
      done();
      await reader.cancel(reason).catch(() => undefined);
    },
  });
}

const LF = 0x0a;
const CR = 0x0d;

/**
 * An SSE `body` whose events are each at most `max` bytes (WHATWG HTML §9.2.6: an event ends at
 * an empty line; lines end in CRLF, LF or CR). The stream itself has no bound: MCP servers may
 * keep it open and send events for as long as the session lives.
 */
function eventBoundedBody(body: ReadableStream<Uint8Array>, max: number, tooLarge: () => Error): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let inEvent = 0;
  let lineEmpty = true;
  let afterCr = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const value = await nextChunk(reader, controller, (err) => err);
      if (!value) return;
      for (const byte of value) {
        if (byte === LF && afterCr) {
          afterCr = false;
          continue;
        }
        afterCr = byte === CR;
        const lineEnd = byte === LF || byte === CR;
        if (lineEnd && lineEmpty) {
          inEvent = 0; // the empty line that dispatches the event
          continue;
        }
        lineEmpty = lineEnd;
        if (++inEvent > max) {
          await reader.cancel().catch(() => undefined);
          controller.error(tooLarge());
          return;
        }
      }
      controller.enqueue(value);
    },
    async cancel(reason) {
      await reader.cancel(reason).catch(() => undefined);
    },
  });
}

/**
 * A request to the MCP server (the user's own choice, no egress policy): through
 * {@link limitedFetch} with the headers deadline and the per-message bounds.
 */
export function resourceFetch(deps: HttpDeps, input: string | URL | Request, init: RequestInit): Promise<Response> {
  return limitedFetch(deps, input, init, 'the MCP server', 'message');
}

const MAX_REDIRECTS = 3;

/**
 * GET that follows at most a few redirects by hand, applying the URL policy to every hop
 * (Security Best Practices, SSRF: "validate redirect targets").
 */
export async function guardedGet(url: URL, deps: HttpDeps, what: string, headers: Record<string, string> = {}): Promise<Response> {
  let target = await checkTarget(url, what, deps);
  for (let hop = 0; ; hop++) {
    const res = await egressFetch(
      target,
      { method: 'GET', headers: { accept: 'application/json', ...headers }, redirect: 'manual' },
      deps,
      what,
    );
    const location = res.headers.get('location');
    if (res.status >= 300 && res.status < 400 && location && hop < MAX_REDIRECTS) {
      await res.body?.cancel();
      target = await checkTarget(new URL(location, target), `${what} (redirect)`, deps);
      continue;
    }
    return res;
  }
}

/** A fetch for oauth4webapi that refuses URLs outside the policy before any byte is sent. */
export function policyFetch(deps: HttpDeps): FetchLike {
  const what = 'authorization server endpoint';
  return async (input, init) => {
    const url = input instanceof Request ? input.url : input;
    await checkTarget(url instanceof URL ? url : new URL(url), what, deps);
    return egressFetch(input, init ?? {}, deps, what);
  };
}

/**
 * Reads a JSON object body; undefined when the body is not a JSON object. A body refused by the
 * request bounds (too large, too slow) throws that refusal instead.
 */
export async function readJsonObject(res: Response): Promise<Record<string, unknown> | undefined> {
  try {
    const body: unknown = await res.json();
    return body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : undefined;
  } catch (err) {
    if (err instanceof McpAuthError) throw err;
    return undefined;
  }
}
