import { ERR, McpAuthError } from '../errors.js';
import { DEFAULTS } from '../config/defaults.js';
import { awaitCompletion, CompletionWaiters } from './completion.js';
import { type UrlElicitationPrompt, urlElicitationPrompt, urlElicitationsOf } from './url-elicitation-request.js';

/** The user's answer to a URL elicitation (MCP elicitation §Response Actions). */
export type UrlElicitationAction = 'accept' | 'decline' | 'cancel';

/** What {@link createUrlElicitation} needs from the host: its way of asking the user, opening a browser, waiting. */
export interface UrlElicitationOptions {
  /**
   * Asks the user whether to open the page. Show which server asks, its `message` (as data), the
   * full `url` and, highlighted, its `host` (with a warning when `punycode` is true); MCP
   * elicitation §Safe URL Handling. Resolve `accept` (open it), `decline` (the user said no) or
   * `cancel` (dismissed without choosing). Called only for URLs `checkElicitationUrl` (`@mcp-auth-kit/client/core`) allows.
   */
  onUrlElicitation: (prompt: UrlElicitationPrompt) => Promise<UrlElicitationAction>;
  /**
   * Opens an accepted URL in the user's browser, in a way the client and the model cannot read
   * (a system browser, never an embedded web view). Default: none, the host opens it in
   * `onUrlElicitation`. Its result is ignored (a host that could not open a browser says so itself).
   */
  openUrl?: (url: URL) => Promise<unknown>;
  /**
   * Resolves when the user says they have finished on the page (a button, Enter in a terminal):
   * the manual control clients SHOULD offer, since a completion notification may never come.
   * `signal` aborts when the wait ends otherwise (the server's completion notification, the time
   * limit). Without it, a 2025-11-25 `-32042` waits for the notification only, and a 2026-07-28
   * request is retried at once.
   */
  waitForCompletion?: (prompt: UrlElicitationPrompt, signal: AbortSignal) => Promise<void>;
  /**
   * Told when a server-initiated `elicitation/create` was refused without asking the user (see
   * `checkElicitationUrl`); the server is answered `decline`. Refusals on `call()` throw instead.
   */
  onRefused?: (error: McpAuthError) => void;
  /** How long to wait for the completion before retrying anyway. Default 300000 (5 minutes). */
  completionTimeoutMs?: number;
  /** How many times `call()` retries a request after URL elicitations. Default 3. */
  maxRetries?: number;
}

/** The client capability this module serves: `elicitation` in URL mode (MCP 2025-11-25 elicitation §Capabilities). */
export interface UrlElicitationCapabilities {
  elicitation: { url: Record<string, never> };
}

/** A fresh `{ elicitation: { url: {} } }` (the SDK merges it into the client's capabilities). */
function urlElicitationCapabilities(): UrlElicitationCapabilities {
  return { elicitation: { url: {} } };
}

/** What an `elicitation/create` handler receives from the MCP SDK v2 client (the parts read here). */
export interface ElicitationHandlerRequest {
  /** The request's `params`: checked here, whatever the server sent. */
  params?: unknown;
}

/** The handler's context from the MCP SDK v2 client (the parts read here). */
export interface ElicitationHandlerContext {
  /** `signal`: aborted when the request is cancelled; a wait for completion then ends. */
  mcpReq?: { signal?: AbortSignal | undefined } | undefined;
}

/**
 * The parts of an MCP SDK v2 `Client` (`@modelcontextprotocol/client`) that
 * {@link UrlElicitation.attach} uses.
 */
export interface ElicitationClient {
  /** Declares the URL-mode elicitation capability (before `connect()`). */
  registerCapabilities(capabilities: UrlElicitationCapabilities): void;
  /** Installs the `elicitation/create` handler. */
  setRequestHandler(
    method: 'elicitation/create',
    handler: (request: ElicitationHandlerRequest, ctx: ElicitationHandlerContext) => Promise<{ action: UrlElicitationAction }>,
  ): void;
  /** Listens for `notifications/elicitation/complete` (2025-11-25). */
  setNotificationHandler(method: 'notifications/elicitation/complete', handler: (notification: { params?: unknown }) => void): void;
}

/** URL-mode elicitation for one MCP client: see {@link createUrlElicitation}. */
export interface UrlElicitation {
  /** `{ elicitation: { url: {} } }`, for hosts that declare capabilities themselves. */
  readonly capabilities: UrlElicitationCapabilities;
  /**
   * Wires an MCP SDK v2 `Client` before `connect()`: declares the URL-mode elicitation capability
   * (merged with the client's others), answers `elicitation/create` (server-initiated on the
   * 2025-11-25 wire, and the `inputRequests` of a 2026-07-28 `InputRequiredResult`, which the SDK
   * fulfils through the same handler and retries with `inputResponses` and `requestState`), and
   * listens for `notifications/elicitation/complete`.
   */
  attach(client: ElicitationClient): void;
  /**
   * Runs `request` (e.g. `() => client.callTool(…)`); when it fails with a `-32042` URL
   * elicitation required error, asks about each page, opens it, waits for the completion
   * (notification for its `elicitationId`, `waitForCompletion`, or the time limit) and runs
   * `request` again, at most `maxRetries` times. Throws `MCP_AUTH_ELICITATION_DECLINED` /
   * `_CANCELLED` when the user does not accept (the request is not retried),
   * `MCP_AUTH_ELICITATION_REFUSED` for a URL that may not be opened, `MCP_AUTH_ELICITATION_LIMIT`
   * when the server still asks after the last retry.
   */
  call<T>(request: () => Promise<T>): Promise<T>;
  /**
   * The `elicitation/create` handler {@link attach} installs, for hosts that register it
   * themselves (SDK v1: `client.setRequestHandler(ElicitRequestSchema, (r, extra) => handleRequest(r, { mcpReq: { signal: extra.signal } }))`).
   * URL mode only (anything else is a `-32602` error); a URL that may not be opened is answered
   * `decline` without asking (and `onRefused` is told). An accepted 2025-11-25 request is answered
   * once the page is opened (the server learns of the completion itself); an accepted 2026-07-28
   * one (no `elicitationId`) after `waitForCompletion`, since the answer makes the SDK retry.
   */
  handleRequest(request: ElicitationHandlerRequest, ctx?: ElicitationHandlerContext): Promise<{ action: UrlElicitationAction }>;
  /** A `notifications/elicitation/complete`'s `elicitationId`: ends a pending wait for it; others are ignored. */
  complete(elicitationId: unknown): void;
}

const INVALID_PARAMS = -32602;

/**
 * URL-mode elicitation for an MCP host (MCP 2025-11-25 elicitation, URL mode; 2026-07-28
 * multi round-trip requests): the server sends the user to a page (a third-party sign-in, a
 * payment) that must not pass through the client. The user is asked first, only https (or http
 * to a loopback host) URLs without credentials are ever opened, and the original request is
 * retried once the page is done.
 */
export function createUrlElicitation(options: UrlElicitationOptions): UrlElicitation {
  const host: Host = {
    options,
    waiters: new CompletionWaiters(),
    completionTimeoutMs: options.completionTimeoutMs ?? DEFAULTS.urlElicitation.completionTimeoutMs,
    maxRetries: options.maxRetries ?? DEFAULTS.urlElicitation.maxRetries,
  };
  const handleRequest = (request: ElicitationHandlerRequest, ctx?: ElicitationHandlerContext) => answerRequest(host, request, ctx);
  return {
    capabilities: urlElicitationCapabilities(),
    attach(client) {
      client.registerCapabilities(urlElicitationCapabilities());
      client.setRequestHandler('elicitation/create', handleRequest);
      client.setNotificationHandler('notifications/elicitation/complete', (notification) => {
        const params = notification?.params;
        host.waiters.complete(
          typeof params === 'object' && params !== null ? (params as { elicitationId?: unknown }).elicitationId : undefined,
        );
      });
    },
    call: (request) => callRetrying(host, request),
    handleRequest,
    complete: (elicitationId) => host.waiters.complete(elicitationId),
  };
}

/** One {@link createUrlElicitation}'s options with their defaults, and its pending completion waits. */
interface Host {
  options: UrlElicitationOptions;
  waiters: CompletionWaiters;
  completionTimeoutMs: number;
  maxRetries: number;
}

async function ask(host: Host, prompt: UrlElicitationPrompt): Promise<UrlElicitationAction> {
  const answer = await host.options.onUrlElicitation(prompt);
  // Anything but an explicit choice is a dismissal: never an implicit accept.
  const action: UrlElicitationAction = answer === 'accept' || answer === 'decline' ? answer : 'cancel';
  if (action === 'accept') await host.options.openUrl?.(prompt.url);
  return action;
}

function waitForCompletion(host: Host, prompt: UrlElicitationPrompt, notified: Promise<void> | undefined, outer?: AbortSignal) {
  const { waitForCompletion: byUser } = host.options;
  return awaitCompletion(prompt, notified, { byUser, timeoutMs: host.completionTimeoutMs }, outer);
}

/** {@link UrlElicitation.handleRequest}. */
async function answerRequest(
  host: Host,
  request: ElicitationHandlerRequest,
  ctx?: ElicitationHandlerContext,
): Promise<{ action: UrlElicitationAction }> {
  const params = request?.params;
  if (typeof params !== 'object' || params === null || (params as { mode?: unknown }).mode !== 'url') {
    // A request without `mode` is form mode (§Elicitation Requests); that mode is not declared here.
    throw Object.assign(new Error('this client answers URL-mode elicitation requests only'), { code: INVALID_PARAMS });
  }
  let prompt: UrlElicitationPrompt;
  try {
    prompt = urlElicitationPrompt(params);
  } catch (err) {
    if (!(err instanceof McpAuthError)) throw err;
    host.options.onRefused?.(err);
    return { action: 'decline' };
  }
  const action = await ask(host, prompt);
  if (action === 'accept' && prompt.elicitationId === undefined) await waitForCompletion(host, prompt, undefined, ctx?.mcpReq?.signal);
  return { action };
}

/** {@link UrlElicitation.call}. */
async function callRetrying<T>(host: Host, request: () => Promise<T>): Promise<T> {
  for (let retry = 0; ; retry++) {
    let prompts: UrlElicitationPrompt[] | undefined;
    try {
      return await request();
    } catch (err) {
      prompts = urlElicitationsOf(err);
      if (!prompts) throw err;
      if (retry >= host.maxRetries) {
        throw new McpAuthError(
          ERR.ELICITATION_LIMIT,
          `the MCP server still asks you to open a page after ${host.maxRetries} retries of the request: it was not retried again`,
          { cause: err },
        );
      }
    }
    for (const prompt of prompts) {
      const waiter = prompt.elicitationId === undefined ? undefined : host.waiters.expect(prompt.elicitationId);
      try {
        const action = await ask(host, prompt);
        if (action !== 'accept') throw notAccepted(action, prompt);
        await waitForCompletion(host, prompt, waiter?.done);
      } finally {
        waiter?.dispose();
      }
    }
  }
}

function notAccepted(action: 'decline' | 'cancel', prompt: UrlElicitationPrompt): McpAuthError {
  return action === 'decline'
    ? new McpAuthError(
        ERR.ELICITATION_DECLINED,
        `you declined to open the page on ${prompt.host} the MCP server asked for: the request was not retried`,
      )
    : new McpAuthError(
        ERR.ELICITATION_CANCELLED,
        `the page on ${prompt.host} the MCP server asked for was not opened (cancelled): the request was not retried`,
      );
}
