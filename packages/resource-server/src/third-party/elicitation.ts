import { ThirdPartyAuthorizationRequiredError, ThirdPartyTokenError } from './errors.js';

/** The first protocol revision with Multi Round-Trip Requests (2026-07-28 changelog, major change 7). */
const FIRST_MRTR_REVISION = '2026-07-28';
/** The `_meta` key a 2026-07-28 request names its protocol revision in (changelog, major change 2). */
const PROTOCOL_VERSION_META_KEY = 'io.modelcontextprotocol/protocolVersion';

/** A URL-mode `elicitation/create` request as a 2026-07-28 `inputRequests` entry (no `elicitationId`: changelog, minor change 11). */
export interface UrlElicitationInputRequest {
  method: 'elicitation/create';
  /** `message`: why the user should open `url` (names the provider); `url`: the AS's connect page. */
  params: { mode: 'url'; message: string; url: string };
}

/** The 2026-07-28 `InputRequiredResult` a handler returns to have the user connect a provider. */
export interface ThirdPartyInputRequiredResult {
  resultType: 'input_required';
  /** One entry, `connect_<provider>`. */
  inputRequests: Record<string, UrlElicitationInputRequest>;
  /** Echoed by the client on its retry (see {@link ThirdPartyAuthorizationOptions.requestState}). */
  requestState?: string;
}

/** Options of {@link withThirdPartyAuthorization}. */
export interface ThirdPartyAuthorizationOptions {
  /**
   * The `requestState` of the 2026-07-28 `InputRequiredResult`, from the elicitation's fresh id
   * (default: the id itself, which nothing here trusts). Set it when the server verifies request
   * states (SDK v2 `requestState.verify`): mint one your verifier accepts, or return `undefined`
   * to send none.
   */
  requestState?: (elicitationId: string) => string | undefined;
}

/** The SDK v2 handler context, as far as it is read here. */
interface V2Context {
  mcpReq: { envelope?: Record<string, unknown>; inputResponses?: Record<string, unknown> };
}

function isV2Context(value: unknown): value is V2Context {
  return typeof value === 'object' && value !== null && typeof (value as { mcpReq?: unknown }).mcpReq === 'object';
}

/** SDK v1's `RequestHandlerExtra`: it has `requestId` and `sendRequest`, and no `mcpReq`. */
function isV1Extra(value: unknown): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    'requestId' in value &&
    typeof (value as { sendRequest?: unknown }).sendRequest === 'function'
  );
}

/**
 * Whether the request is served on a revision with MRTR: its `_meta` envelope names one (the SDK
 * classifies a request's era by the same claim). 2025 requests carry no envelope.
 */
function servesInputRequired(ctx: V2Context): boolean {
  const version = ctx.mcpReq.envelope?.[PROTOCOL_VERSION_META_KEY];
  // revisions are dates (YYYY-MM-DD): they compare as strings
  return typeof version === 'string' && version >= FIRST_MRTR_REVISION;
}

/** The `inputRequests` key for a provider's connect prompt (its short name is validated: letters, digits, `._-`). */
function inputKey(provider: string): string {
  return `connect_${provider}`;
}

/** The 2025-11-25 URL-mode elicitation of the error (`-32042` `data.elicitations[]`). */
function urlElicitation(err: ThirdPartyAuthorizationRequiredError) {
  return { mode: 'url' as const, elicitationId: err.elicitationId, url: err.url, message: err.message };
}

/**
 * What an SDK v2 handler answers: on 2026-07-28 an `InputRequiredResult` (or, on the retry after
 * the user declined, a refusal); on 2025-11-25 SDK v2's own `UrlElicitationRequiredError`.
 */
async function v2Answer(
  err: ThirdPartyAuthorizationRequiredError,
  ctx: V2Context,
  options: ThirdPartyAuthorizationOptions,
): Promise<ThirdPartyInputRequiredResult> {
  if (!servesInputRequired(ctx)) {
    const sdk = await import('@modelcontextprotocol/server').catch(() => undefined);
    if (sdk === undefined) throw err;
    throw new sdk.UrlElicitationRequiredError([urlElicitation(err)], err.message);
  }
  const key = inputKey(err.provider);
  // MRTR: the retry carries the user's answer; a declined prompt is not asked again in a loop
  const answer = ctx.mcpReq.inputResponses?.[key];
  const action = typeof answer === 'object' && answer !== null ? (answer as { action?: unknown }).action : undefined;
  if (action === 'decline' || action === 'cancel') {
    throw new ThirdPartyTokenError(
      'access_denied',
      err.provider,
      `Your ${err.providerDisplayName} account is not connected (the connect page was declined)`,
    );
  }
  const requestState = options.requestState === undefined ? err.elicitationId : options.requestState(err.elicitationId);
  return {
    resultType: 'input_required',
    inputRequests: { [key]: { method: 'elicitation/create', params: { mode: 'url', message: err.message, url: err.url } } },
    ...(requestState !== undefined ? { requestState } : {}),
  };
}

/** SDK v1's `UrlElicitationRequiredError` (its McpServer passes only its own `McpError`s through as JSON-RPC errors). */
async function v1Error(err: ThirdPartyAuthorizationRequiredError): Promise<Error> {
  const sdk = await import('@modelcontextprotocol/sdk/types.js').catch(() => undefined);
  if (sdk === undefined) return err;
  return new sdk.UrlElicitationRequiredError([urlElicitation(err)], err.message);
}

/**
 * Wraps a tool callback (SDK v1 `McpServer` or SDK v2 `McpServer`) so that a
 * {@link ThirdPartyAuthorizationRequiredError} from `thirdPartyToken` becomes a URL-mode
 * elicitation of the connect page, on the wire the client speaks:
 * - 2025-11-25 (SDK v1, and SDK v2 on that wire): the JSON-RPC error `-32042` (URL elicitation
 *   required) with `data.elicitations: [{ mode: 'url', elicitationId, url, message }]`; the
 *   client opens the page and retries the call;
 * - 2026-07-28 (SDK v2): an `InputRequiredResult` whose `inputRequests` hold one URL-mode
 *   `elicitation/create` (key `connect_<provider>`) and a `requestState`; the client retries with
 *   `inputResponses`, and a declined prompt ends the call with a tool error (`access_denied`).
 *
 * Other errors pass through unchanged: the SDK shows them as a tool error (`isError`) with their
 * message, which for a {@link ThirdPartyTokenError} never holds a token.
 */
export function withThirdPartyAuthorization<H extends (...args: never[]) => unknown>(
  handler: H,
  options: ThirdPartyAuthorizationOptions = {},
): H {
  async function thirdPartyAuthorized(this: unknown, ...args: unknown[]): Promise<unknown> {
    try {
      return await Reflect.apply(handler, this, args);
    } catch (err) {
      if (!(err instanceof ThirdPartyAuthorizationRequiredError)) throw err;
      // the SDKs pass the request context last: (args, ctx) or (ctx)
      const ctx = args.at(-1);
      if (isV2Context(ctx)) return v2Answer(err, ctx, options);
      if (isV1Extra(ctx)) throw await v1Error(err);
      throw err;
    }
  }
  return thirdPartyAuthorized as unknown as H;
}
