/**
 * Opening an MCP conversation on whichever wire the server speaks: the 2026-07-28 stateless
 * wire needs nothing; the 2025-era wire needs `initialize` → `notifications/initialized`, then
 * `MCP-Protocol-Version` and, when the server assigned one, `Mcp-Session-Id` on every request
 * (MCP 2025-11-25 Lifecycle §Initialization, Transports §Session Management and §Protocol
 * Version Header).
 */
import { classifyStatelessAttempt } from './mcp-negotiation.js';
import { describeResponse } from './response-report.js';
import {
  CLIENT_INFO,
  deleteMcpSession,
  isStatelessWire,
  LEGACY_PROTOCOL_VERSIONS,
  MCP_PROTOCOL_VERSION,
  newRequestId,
  postMcpMessage,
  type McpExchange,
  type McpHeaders,
  type McpResponse,
  type McpWireContext,
} from './mcp-wire.js';

export interface McpConnectionOptions {
  /** Access token sent as `Authorization: Bearer …`; omit to test the unauthenticated path. */
  token?: string;
  /** Extra headers on every request (see {@link McpHeaders}); they override the kit's own. */
  headers?: McpHeaders;
  /**
   * `'auto'` (default): the 2026-07-28 stateless wire, falling back to `initialize` (offering
   * 2025-11-25, then what the server names) when the server answers in a way only an older server
   * does. A version string pins that version: no fallback, and the server must accept it.
   */
  protocolVersion?: string;
  /**
   * The client capabilities the kit declares (default `{}`): in `initialize` on the 2025-era
   * wire, in every request's `_meta` on the 2026-07-28 wire. `{ elicitation: { url: {} } }` lets
   * a server ask for a URL-mode elicitation (a 2026-07-28 server refuses to without it).
   */
  capabilities?: Record<string, unknown>;
}

/** Per-request overrides inside a session (e.g. a stepped-up token). */
export interface McpSessionRequestOptions {
  token?: string;
  headers?: McpHeaders;
}

export interface McpSession {
  readonly url: string;
  /** The version in use: 2026-07-28, or the one the server chose in `initialize`. */
  readonly protocolVersion: string;
  /** The `Mcp-Session-Id` the server assigned (stateful 2025-era servers only). */
  readonly sessionId: string | undefined;
  request(o: McpSessionRequestOptions & { method: string; params?: Record<string, unknown> }): Promise<McpResponse>;
  callTool(o: McpSessionRequestOptions & { name: string; arguments?: Record<string, unknown> }): Promise<McpResponse>;
  /** Ends a server-assigned session with DELETE (its answer is not checked); nothing to do otherwise. */
  close(): Promise<void>;
}

/** The version negotiation or the handshake did not complete; the response shows why. */
export class McpHandshakeError extends Error {
  readonly code = 'ERR_MCP_HANDSHAKE';
  declare readonly response: McpResponse;

  constructor(reason: string, response: McpResponse) {
    super(`${reason}\n\n${describeResponse(response)}`);
    this.name = 'McpHandshakeError';
    Object.defineProperty(this, 'response', { value: response });
  }
}

/** What {@link openMcpSession} and `mcpRequest` assume for a connection option not given. */
export const CONNECTION_DEFAULTS = { protocolVersion: 'auto' } as const;

const isSuccess = (status: number) => status >= 200 && status < 300;

class Session implements McpSession {
  private closed = false;

  constructor(
    private readonly context: McpWireContext,
    /** Requests that opened the session, shown with every response's exchanges. */
    private readonly opening: readonly McpExchange[],
  ) {}

  get url(): string {
    return this.context.url;
  }
  get protocolVersion(): string {
    return this.context.protocolVersion;
  }
  get sessionId(): string | undefined {
    return this.context.sessionId;
  }

  request(o: McpSessionRequestOptions & { method: string; params?: Record<string, unknown> }): Promise<McpResponse> {
    const context = { ...this.context, ...('token' in o && { token: o.token }), ...('headers' in o && { headers: o.headers }) };
    return postMcpMessage(context, { method: o.method, ...(o.params && { params: o.params }), id: newRequestId() }, [...this.opening]);
  }

  callTool(o: McpSessionRequestOptions & { name: string; arguments?: Record<string, unknown> }): Promise<McpResponse> {
    const { name, arguments: args, ...rest } = o;
    return this.request({ ...rest, method: 'tools/call', params: { name, arguments: args ?? {} } });
  }

  async close(): Promise<void> {
    const sessionId = this.context.sessionId;
    if (this.closed || sessionId === undefined) return;
    this.closed = true;
    await deleteMcpSession({ ...this.context, sessionId }, []).catch(() => undefined);
  }
}

type Handshake = { ok: true; session: Session } | { ok: false; response: McpResponse };

/**
 * `initialize` offering `versions[0]`, then `notifications/initialized`. A refusal (non-2xx) is
 * returned for the caller to report; a 2xx without a usable InitializeResult throws.
 */
export async function initializeHandshake(
  url: string,
  options: McpConnectionOptions,
  versions: readonly string[],
  pinned: boolean,
  log: McpExchange[],
): Promise<Handshake> {
  const offered = versions[0] ?? LEGACY_PROTOCOL_VERSIONS[0]!;
  const base = { url, ...(options.token !== undefined && { token: options.token }), ...(options.headers && { headers: options.headers }) };
  const capabilities = options.capabilities ?? {};
  const init = await postMcpMessage(
    { ...base, protocolVersion: offered, beforeHandshake: true },
    { method: 'initialize', id: newRequestId(), params: { protocolVersion: offered, capabilities, clientInfo: CLIENT_INFO } },
    log,
  );
  if (!isSuccess(init.status)) return { ok: false, response: init };
  const agreed: unknown = init.body?.result?.protocolVersion;
  if (typeof agreed !== 'string') {
    throw new McpHandshakeError('initialize answered without an InitializeResult (MCP 2025-11-25 Lifecycle §Initialization)', init);
  }
  // Lifecycle §Version Negotiation: the server may answer another version; the client must speak it.
  const acceptable = pinned ? [offered] : LEGACY_PROTOCOL_VERSIONS;
  if (!acceptable.includes(agreed)) {
    throw new McpHandshakeError(
      pinned
        ? `initialize: the server chose protocol version ${agreed}, not the pinned ${offered}`
        : `initialize: the server chose protocol version ${agreed}; the kit speaks ${[MCP_PROTOCOL_VERSION, ...LEGACY_PROTOCOL_VERSIONS].join(', ')}`,
      init,
    );
  }
  const sessionId = init.headers.get('mcp-session-id') ?? undefined;
  const context: McpWireContext = { ...base, protocolVersion: agreed, ...(sessionId !== undefined && { sessionId }) };
  const initialized = await postMcpMessage(context, { method: 'notifications/initialized' }, log);
  if (!isSuccess(initialized.status)) return { ok: false, response: initialized };
  return { ok: true, session: new Session(context, [...log]) };
}

/** A session on the 2026-07-28 wire: no handshake, every request carries its version. */
export function statelessSession(url: string, options: McpConnectionOptions, protocolVersion = MCP_PROTOCOL_VERSION): McpSession {
  return new Session(
    {
      url,
      protocolVersion,
      ...(options.token !== undefined && { token: options.token }),
      ...(options.headers && { headers: options.headers }),
      ...(options.capabilities && { capabilities: options.capabilities }),
    },
    [],
  );
}

/**
 * Opens a conversation for several requests (e.g. a session on a stateful SDK v1 server, or a
 * step-up inside one session). With `protocolVersion: 'auto'` it probes with `server/discover`
 * on the 2026-07-28 wire and falls back to `initialize` as {@link McpConnectionOptions} says.
 * Throws {@link McpHandshakeError} when the server refuses; one-off requests that should be
 * refused (401, 403) are tested with `mcpRequest` / `callTool` instead.
 */
export async function openMcpSession(url: string, options: McpConnectionOptions = {}): Promise<McpSession> {
  const version = options.protocolVersion ?? CONNECTION_DEFAULTS.protocolVersion;
  if (version !== 'auto' && isStatelessWire(version)) return statelessSession(url, options, version);
  const log: McpExchange[] = [];
  let versions: readonly string[] = [version];
  if (version === 'auto') {
    const probe = await statelessSession(url, options).request({ method: 'server/discover' });
    log.push(...probe.exchanges);
    if (isSuccess(probe.status) && probe.body?.result !== undefined) return statelessSession(url, options);
    const outcome = classifyStatelessAttempt(probe, LEGACY_PROTOCOL_VERSIONS);
    if (outcome.kind === 'answer') throw new McpHandshakeError(`server/discover on the ${MCP_PROTOCOL_VERSION} wire was refused`, probe);
    versions = outcome.versions;
  }
  const handshake = await initializeHandshake(url, options, versions, version !== 'auto', log);
  if (!handshake.ok) throw new McpHandshakeError('the initialize handshake was refused', handshake.response);
  return handshake.session;
}
