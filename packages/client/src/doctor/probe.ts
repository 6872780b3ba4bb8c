/**
 * The one way the doctor reaches the network: the client library's request path (URL policy,
 * egress policy checked before and at connect time, per-request deadline and size bound), with a
 * cap on the number of requests and on the time of the whole run, and a record of each exchange
 * with every secret redacted.
 */
import { ANY_ADDRESS, PUBLIC_ONLY, resolveEgress, urlHost, visibleText } from '@mcp-auth-kit/protocol';
import { guardedGet, policyFetch, type FetchLike, type HttpDeps } from '../http.js';
import type { CheckDeploymentOptions } from './types.js';
import { DEFAULTS } from '../config/defaults.js';

/** One request and its answer, as a finding shows them. */
export interface Exchange {
  /** Undefined when no answer came (refused by the policy, unreachable, over a bound). */
  status?: number;
  headers: Headers;
  /** The body as text (bounded by the client's response limit). */
  text: string;
  /** The body parsed as a JSON object, when it is one. */
  json?: Record<string, unknown>;
  /** Why there is no answer. */
  error?: string;
  sent: string;
  received: string;
}

export interface ProbeRequest {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
}

const SHOWN_HEADERS = [
  'www-authenticate',
  'content-type',
  'location',
  'access-control-allow-origin',
  'access-control-allow-headers',
  'access-control-allow-methods',
  'access-control-expose-headers',
];
const EXCERPT = 400;
const TIME_UP = 'the time for all checks is up (timeoutMs)';
/** The client library names every request of its policy fetch for an AS; the doctor's go to any server. */
const CLIENT_LABEL = /\bauthorization server endpoint\b/g;
const SECRET_FIELDS = /("(?:access_token|refresh_token|id_token|client_secret|code)"\s*:\s*")[^"]*"/g;
const SECRET_PARAMS = /\b(access_token|refresh_token|client_secret|code)=[^&\s]*/g;

export class Probe {
  readonly #deps: HttpDeps;
  readonly #secrets = new Set<string>();
  readonly #deadline: AbortSignal;
  readonly #max: number;
  #count = 0;

  constructor(options: CheckDeploymentOptions) {
    const allowPrivate = options.allowPrivate === true;
    this.#max = options.maxRequests ?? DEFAULTS.doctor.maxRequests;
    this.#deadline = AbortSignal.timeout(options.timeoutMs ?? DEFAULTS.doctor.timeoutMs);
    for (const s of [options.token, options.otherResourceToken, options.refresh?.refreshToken, options.refresh?.clientSecret]) {
      if (s) this.#secrets.add(s);
    }
    this.#deps = {
      fetch: this.#counted(options.fetch ?? fetch, allowPrivate),
      allowInsecureRequests: allowPrivate,
      egress: allowPrivate ? ANY_ADDRESS : PUBLIC_ONLY,
      limits: { timeoutMs: options.requestTimeoutMs ?? DEFAULTS.doctor.requestTimeoutMs, maxResponseBytes: 256 * 1024 },
    };
  }

  get count(): number {
    return this.#count;
  }

  /** A value that must never be shown (a token that came in an answer). */
  keepSecret(value: unknown): void {
    if (typeof value === 'string' && value.length > 0) this.#secrets.add(value);
  }

  /** Every request passes here after the policy's checks: the caps, and plain http only to non-public addresses. */
  #counted(inner: FetchLike, allowPrivate: boolean): FetchLike {
    return async (input, init) => {
      if (this.#deadline.aborted) throw new Error(TIME_UP);
      if (this.#count >= this.#max) throw new Error(`the request budget is spent (maxRequests ${this.#max})`);
      this.#count++;
      const url = new URL(input instanceof Request ? input.url : String(input));
      if (url.protocol === 'http:') {
        const decision = allowPrivate ? await resolveEgress(urlHost(url), PUBLIC_ONLY) : undefined;
        if (!decision || decision.ok) throw new Error(`plain http to a public address is refused (${url.origin}); use https`);
      }
      const signal = init?.signal ? AbortSignal.any([init.signal, this.#deadline]) : this.#deadline;
      try {
        return await inner(input, { ...init, signal });
      } catch (err) {
        if (this.#deadline.aborted) throw new Error(TIME_UP);
        throw err;
      }
    };
  }

  /** GET a metadata document, following at most a few redirects, each hop under the policy. */
  get(url: string | URL, headers: Record<string, string> = {}): Promise<Exchange> {
    const target = new URL(url);
    return this.#record('GET', target, headers, undefined, () => guardedGet(target, this.#deps, 'the server', headers));
  }

  /** Any other request (no redirect followed: a redirect is an answer to report). */
  send(url: string | URL, request: ProbeRequest): Promise<Exchange> {
    const target = new URL(url);
    const method = request.method ?? 'POST';
    const headers = request.headers ?? {};
    const init: RequestInit = { method, headers, redirect: 'manual', ...(request.body !== undefined && { body: request.body }) };
    return this.#record(method, target, headers, request.body, () => policyFetch(this.#deps)(target, init));
  }

  async #record(
    method: string,
    url: URL,
    headers: Record<string, string>,
    body: string | undefined,
    run: () => Promise<Response>,
  ): Promise<Exchange> {
    const sent = this.redact(
      lines([`${method} ${url.href}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), ...(body ? ['', excerpt(body)] : [])]),
    );
    let res: Response;
    try {
      res = await run();
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      const error = this.redact(visibleText(message.replace(CLIENT_LABEL, 'the server')));
      return { headers: new Headers(), text: '', error, sent, received: `no answer: ${error}` };
    }
    let text = '';
    try {
      text = await res.text();
    } catch (err) {
      text = `(body not read: ${err instanceof Error ? err.message : String(err)})`;
    }
    const json = parseObject(text);
    for (const field of ['access_token', 'refresh_token', 'id_token']) this.keepSecret(json?.[field]);
    const shown = SHOWN_HEADERS.filter((h) => res.headers.has(h)).map((h) => `${h}: ${res.headers.get(h)}`);
    const received = this.redact(lines([`HTTP ${res.status}`, ...shown, ...(text ? ['', excerpt(text)] : [])]));
    return { status: res.status, headers: res.headers, text, ...(json && { json }), sent, received };
  }

  /** `text` with every known secret and every token-like field or parameter replaced. */
  redact(text: string): string {
    let out = text.replace(SECRET_FIELDS, '$1[redacted]"').replace(SECRET_PARAMS, '$1=[redacted]');
    for (const secret of this.#secrets) out = out.split(secret).join('[redacted]');
    // the credential of an Authorization header, whatever its scheme (a challenge's parameters stay)
    return out.replace(/^(authorization:\s*\S+\s+)\S+/gim, '$1[redacted]');
  }
}

/**
 * The evidence's own lines: each part one line, whatever it holds (a server's line breaks,
 * controls and invisible characters shown as escapes), so no answer can forge a line of the report.
 */
function lines(parts: string[]): string {
  return parts.map((part) => visibleText(part)).join('\n');
}

function excerpt(text: string): string {
  return text.length > EXCERPT ? `${text.slice(0, EXCERPT)}… (${text.length} bytes)` : text;
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
