/**
 * A readable dump of an HTTP response for failure messages: status, every header, the body and,
 * for the kit's own requests, how the response came about (version fallback, session).
 */
import { AssertionError } from 'node:assert';

/** Anything with a status and headers: a fetch Response, a supertest response, the kit's `McpResponse`. */
export interface ResponseLike {
  status: number;
  headers: Headers | Record<string, string | string[] | undefined>;
}

interface ExchangeLike {
  httpMethod?: string;
  method?: string;
  protocolVersion?: string;
  sessionId?: string;
  status: number;
}

const MAX_BODY = 4000;

export function headerValue(response: ResponseLike, name: string): string | undefined {
  const h = response.headers;
  if (typeof (h as Headers).get === 'function') return (h as Headers).get(name) ?? undefined;
  const record = h as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value.join(', ') : value;
}

function headerLines(response: ResponseLike): string[] {
  const h = response.headers;
  const entries: [string, string][] =
    typeof (h as Headers).entries === 'function' && typeof (h as Headers).get === 'function'
      ? [...(h as Headers).entries()]
      : Object.entries(h as Record<string, string | string[] | undefined>)
          .filter((e): e is [string, string | string[]] => e[1] !== undefined)
          .map(([k, v]) => [k.toLowerCase(), Array.isArray(v) ? v.join(', ') : String(v)]);
  return entries.map(([k, v]) => `  ${k}: ${v}`);
}

function isStream(value: unknown): boolean {
  return typeof value === 'object' && value !== null && typeof (value as { getReader?: unknown }).getReader === 'function';
}

function bodyText(response: ResponseLike): string {
  const r = response as ResponseLike & { text?: unknown; body?: unknown; bodyUsed?: unknown };
  // A fetch Response: its body is a stream that only an async read could show.
  if (typeof Response !== 'undefined' && response instanceof Response) {
    return response.body === null
      ? '(empty)'
      : '(not shown: the body of a fetch Response is read asynchronously; assert on `await readMcpResponse(res)` to see it)';
  }
  let text: string;
  if (typeof r.text === 'string')
    text = r.text; // supertest, McpResponse: the raw body
  else if (r.body === undefined || r.body === null || r.body === '') return '(empty)';
  else if (isStream(r.body)) return '(not shown: a stream)';
  else if (typeof r.body === 'string') text = r.body;
  else {
    try {
      text = JSON.stringify(r.body);
    } catch {
      text = String(r.body);
    }
  }
  text = text.trimEnd();
  if (text === '') return '(empty)';
  const shown = text.length > MAX_BODY ? `${text.slice(0, MAX_BODY)}… (${text.length - MAX_BODY} more characters)` : text;
  return shown.split(/\r?\n/).join('\n  '); // SSE bodies span lines: keep them indented under "Body:"
}

function exchangeLine(e: ExchangeLike): string {
  const what = e.httpMethod === 'DELETE' ? 'DELETE (end session)' : `${e.method ?? 'POST'}`;
  const version = e.protocolVersion ? ` @${e.protocolVersion}` : '';
  const session = e.sessionId ? ` [session ${e.sessionId}]` : '';
  return `  ${what}${version}${session} → ${e.status}`;
}

/** Multi-line description: `HTTP <status>`, headers, body, and the exchanges when known. */
export function describeResponse(response: ResponseLike): string {
  const lines = [`Response: HTTP ${response.status}`, 'Headers:', ...headerLines(response), 'Body:', `  ${bodyText(response)}`];
  const exchanges = (response as { exchanges?: unknown }).exchanges;
  if (Array.isArray(exchanges) && exchanges.length > 1) {
    lines.push('Requests made for this response:', ...(exchanges as ExchangeLike[]).map(exchangeLine));
  }
  return lines.join('\n');
}

/** What a failed kit assertion throws: node:assert's AssertionError, with the response attached and shown. */
export class ResponseAssertionError extends AssertionError {
  /** The first line of the message: what was expected and what came back. */
  declare readonly reason: string;
  /** The response the assertion looked at. */
  declare readonly response: ResponseLike;

  constructor(reason: string, response: ResponseLike, detail: { actual: unknown; expected: unknown; operator?: string }) {
    super({
      message: `${reason}\n\n${describeResponse(response)}`,
      actual: detail.actual,
      expected: detail.expected,
      operator: detail.operator ?? 'challenge',
    });
    // Not enumerable: runners print an error's own enumerable properties, and the message already shows the response.
    Object.defineProperty(this, 'reason', { value: reason });
    Object.defineProperty(this, 'response', { value: response });
  }
}
