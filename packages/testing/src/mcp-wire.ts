/**
 * One MCP message over Streamable HTTP, on either wire: the 2026-07-28 stateless wire (`_meta`
 * envelope, `Mcp-Method` / `Mcp-Name` headers) or the initialize-based wire of 2025-03-26 …
 * 2025-11-25 (`MCP-Protocol-Version` and `Mcp-Session-Id` headers after the handshake).
 */

/** The stateless wire (MCP 2026-07-28, no `initialize`). */
export const MCP_PROTOCOL_VERSION = '2026-07-28';
/** Initialize-based versions the kit falls back to, newest first (what SDK v1 servers speak). */
export const LEGACY_PROTOCOL_VERSIONS: readonly string[] = ['2025-11-25', '2025-06-18', '2025-03-26'];

export const CLIENT_INFO = { name: 'mcp-auth-kit-testing', version: '0.1.0' };

/** Versions from 2026-07-28 on carry their version in every request: no handshake. */
export function isStatelessWire(protocolVersion: string): boolean {
  return protocolVersion >= MCP_PROTOCOL_VERSION;
}

/** What the kit is about to send; given to a `headers` function. */
export interface McpOutgoingRequest {
  httpMethod: 'POST' | 'DELETE';
  /** JSON-RPC method; absent for the DELETE that ends a session. */
  method?: string;
  protocolVersion: string;
  sessionId?: string;
}

/**
 * Extra request headers, sent on every HTTP request the kit makes for a call (they override the
 * kit's own). A function is called once per HTTP request: per-request values such as DPoP
 * proofs (RFC 9449, one `jti` per request) need it, since one call can take several requests.
 */
export type McpHeaders =
  | Record<string, string>
  | ((request: McpOutgoingRequest) => Record<string, string> | Promise<Record<string, string>>);

/** One HTTP request the kit made, and its status. */
export interface McpExchange {
  httpMethod: 'POST' | 'DELETE';
  method?: string;
  protocolVersion: string;
  /** The `Mcp-Session-Id` sent with the request. */
  sessionId?: string;
  status: number;
}

export interface McpResponse {
  status: number;
  headers: Headers;
  /** The JSON-RPC message (JSON body, or the response among the SSE events), the JSON error body, or the text. */
  body: any;
  /** The raw body. */
  text: string;
  /** The protocol version the request was sent with. */
  protocolVersion: string;
  /** The `Mcp-Session-Id` the request was sent with (stateful servers on the initialize-based wire). */
  sessionId?: string;
  /**
   * Every HTTP request the kit made to get this response, in order, this one last: a refused
   * 2026-07-28 attempt, `initialize`, `notifications/initialized`, then the request itself.
   */
  exchanges: McpExchange[];
}

export interface McpMessage {
  method: string;
  params?: Record<string, unknown>;
  /** Notifications have none. */
  id?: number;
}

/** Where and how a message is sent. */
export interface McpWireContext {
  url: string;
  protocolVersion: string;
  /** Legacy wire before `initialize` answered: the 2025 transports send no version header then. */
  beforeHandshake?: boolean;
  sessionId?: string;
  token?: string;
  headers?: McpHeaders;
  /** 2026-07-28: the `_meta` client capabilities of every request (2025: declared in `initialize`). */
  capabilities?: Record<string, unknown>;
}

let nextId = 1;
export function newRequestId(): number {
  return nextId++;
}

const NAME_PARAM: Record<string, 'name' | 'uri'> = { 'tools/call': 'name', 'prompts/get': 'name', 'resources/read': 'uri' };

/**
 * An `Mcp-Name` value (2026-07-28 Streamable HTTP §Value Encoding): plain when it is visible
 * ASCII or space without surrounding whitespace, otherwise `=?base64?…?=` of its UTF-8 bytes
 * (also when the plain value looks like that sentinel).
 */
export function encodeMcpHeaderValue(value: string): string {
  const plain = /^[\x20-\x7e]*$/.test(value) && value.trim() === value && !/^=\?base64\?.*\?=$/.test(value);
  return plain ? value : `=?base64?${Buffer.from(value, 'utf8').toString('base64')}?=`;
}

async function extraHeaders(context: McpWireContext, request: McpOutgoingRequest): Promise<Record<string, string>> {
  const h = context.headers;
  if (h === undefined) return {};
  return typeof h === 'function' ? await h(request) : h;
}

/** Header names are case-insensitive (RFC 9110 §5.1): `Authorization` from the caller replaces the kit's `authorization`. */
function mergeHeaders(own: Record<string, string>, extra: Record<string, string>): Headers {
  const headers = new Headers(own);
  for (const [name, value] of Object.entries(extra)) headers.set(name, value);
  return headers;
}

function baseHeaders(context: McpWireContext): Record<string, string> {
  return {
    accept: 'application/json, text/event-stream',
    ...(context.token !== undefined && { authorization: `Bearer ${context.token}` }),
    ...(!context.beforeHandshake && { 'mcp-protocol-version': context.protocolVersion }),
    ...(context.sessionId !== undefined && { 'mcp-session-id': context.sessionId }),
  };
}

function statelessBody(
  message: McpMessage,
  protocolVersion: string,
  capabilities: Record<string, unknown>,
): { params: Record<string, unknown>; headers: Record<string, string> } {
  const params = message.params ?? {};
  const meta = {
    'io.modelcontextprotocol/protocolVersion': protocolVersion,
    'io.modelcontextprotocol/clientInfo': CLIENT_INFO,
    'io.modelcontextprotocol/clientCapabilities': capabilities,
    ...(params._meta as Record<string, unknown> | undefined),
  };
  const headers: Record<string, string> = { 'mcp-method': message.method };
  const nameParam = NAME_PARAM[message.method];
  const name = nameParam === undefined ? undefined : params[nameParam];
  if (typeof name === 'string') headers['mcp-name'] = encodeMcpHeaderValue(name);
  return { params: { ...params, _meta: meta }, headers };
}

/** Sends one JSON-RPC request or notification as a POST and reads the answer. */
export async function postMcpMessage(context: McpWireContext, message: McpMessage, log: McpExchange[]): Promise<McpResponse> {
  const stateless = isStatelessWire(context.protocolVersion);
  const wire = stateless
    ? statelessBody(message, context.protocolVersion, context.capabilities ?? {})
    : { params: message.params, headers: {} };
  const outgoing: McpOutgoingRequest = {
    httpMethod: 'POST',
    method: message.method,
    protocolVersion: context.protocolVersion,
    ...(context.sessionId !== undefined && { sessionId: context.sessionId }),
  };
  const headers = mergeHeaders(
    { 'content-type': 'application/json', ...baseHeaders(context), ...wire.headers },
    await extraHeaders(context, outgoing),
  );
  const body = {
    jsonrpc: '2.0',
    ...(message.id !== undefined && { id: message.id }),
    method: message.method,
    ...(wire.params !== undefined && { params: wire.params }),
  };
  const res = await fetch(context.url, { method: 'POST', headers, body: JSON.stringify(body) });
  return record(res, outgoing, log);
}

/** DELETE with the session id: ends a 2025-era session (2025-11-25 Transports §Session Management). */
export async function deleteMcpSession(context: McpWireContext & { sessionId: string }, log: McpExchange[]): Promise<McpResponse> {
  const outgoing: McpOutgoingRequest = { httpMethod: 'DELETE', protocolVersion: context.protocolVersion, sessionId: context.sessionId };
  const headers = mergeHeaders(baseHeaders(context), await extraHeaders(context, outgoing));
  const res = await fetch(context.url, { method: 'DELETE', headers });
  return record(res, outgoing, log);
}

async function record(res: Response, outgoing: McpOutgoingRequest, log: McpExchange[]): Promise<McpResponse> {
  const read = await readMcpResponse(res);
  log.push({ ...outgoing, status: res.status });
  return {
    ...read,
    protocolVersion: outgoing.protocolVersion,
    ...(outgoing.sessionId !== undefined && { sessionId: outgoing.sessionId }),
    exchanges: [...log],
  };
}

function isJsonRpcResponse(value: unknown): boolean {
  return typeof value === 'object' && value !== null && 'id' in value && ('result' in value || 'error' in value);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** SSE events (blank-line separated; `data:` lines of one event joined by newlines, WHATWG HTML §9.2.6). */
function sseData(text: string): string[] {
  return text
    .split(/\r?\n\r?\n/)
    .map((event) =>
      event
        .split(/\r?\n/)
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(line.startsWith('data: ') ? 6 : 5))
        .join('\n'),
    )
    .filter((data) => data !== '');
}

/**
 * Reads a fetch `Response` into `{ status, headers, body, text }`, so assertions can show its
 * body: use it on responses of your own `fetch` calls before asserting on them.
 */
export async function readMcpResponse(res: Response): Promise<Pick<McpResponse, 'status' | 'headers' | 'body' | 'text'>> {
  const text = await res.text();
  let body: unknown;
  if (text === '') body = undefined;
  else if ((res.headers.get('content-type') ?? '').includes('text/event-stream')) {
    const messages = sseData(text).map(parseJson);
    body = messages.findLast(isJsonRpcResponse) ?? messages.at(-1);
  } else body = parseJson(text);
  return { status: res.status, headers: res.headers, body, text };
}
