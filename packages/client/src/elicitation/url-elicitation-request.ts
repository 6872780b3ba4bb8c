import { checkElicitationUrl, elicitationRefused, type ElicitationTarget } from './elicitation-url.js';

/** JSON-RPC error code of `URLElicitationRequiredError` (MCP 2025-11-25 elicitation §Error Handling). */
export const URL_ELICITATION_REQUIRED = -32042;

/**
 * How many URL elicitations one `-32042` error may ask for at once. Each is a page the user is asked
 * to open, one after the other; a server asking for more is not asking a person (clients SHOULD
 * rate-limit elicitation, §Security Considerations).
 */
export const MAX_ELICITATIONS_PER_ERROR = 4;

/** A URL-mode elicitation, checked: what the host shows and asks about. */
export interface UrlElicitationPrompt extends ElicitationTarget {
  /**
   * The server's explanation, exactly as sent: free text of the server's choosing, to show as
   * data (escape it for the medium: terminal, HTML), never as markup or a link.
   */
  message: string;
  /**
   * The 2025-11-25 `elicitationId`, when the server gave one: its
   * `notifications/elicitation/complete` names it. 2026-07-28 elicitations have none.
   */
  elicitationId?: string;
}

/**
 * The `params` of an `elicitation/create` in URL mode (or one entry of a `-32042` error's
 * `data.elicitations`), checked: `mode: "url"`, a string `message`, a `url` that passes
 * {@link checkElicitationUrl}, an optional string `elicitationId`. Throws `MCP_AUTH_ELICITATION_REFUSED`.
 */
export function urlElicitationPrompt(params: unknown): UrlElicitationPrompt {
  if (typeof params !== 'object' || params === null) throw elicitationRefused('the request has no parameters');
  const p = params as Record<string, unknown>;
  if (p.mode !== 'url') throw elicitationRefused('the request is not in URL mode');
  if (typeof p.message !== 'string') throw elicitationRefused('the "message" of the request is not a string');
  if (p.elicitationId !== undefined && (typeof p.elicitationId !== 'string' || p.elicitationId === '')) {
    throw elicitationRefused('the "elicitationId" of the request is not a string');
  }
  const target = checkElicitationUrl(p.url);
  return { ...target, message: p.message, ...(typeof p.elicitationId === 'string' && { elicitationId: p.elicitationId }) };
}

/**
 * The URL elicitations a `-32042` (URL elicitation required) error asks for, in order, checked
 * with {@link urlElicitationPrompt}; `undefined` when `error` is another error. Reads the code and
 * `data` the MCP SDKs keep on their errors (SDK v2 `ProtocolError` / `UrlElicitationRequiredError`,
 * SDK v1 `McpError`), so it works with either. A `-32042` without a usable list throws
 * `MCP_AUTH_ELICITATION_REFUSED` (the error MUST list them, each in URL mode).
 */
export function urlElicitationsOf(error: unknown): UrlElicitationPrompt[] | undefined {
  if (typeof error !== 'object' || error === null || (error as { code?: unknown }).code !== URL_ELICITATION_REQUIRED) return undefined;
  const data = (error as { data?: unknown }).data;
  const list = typeof data === 'object' && data !== null ? (data as { elicitations?: unknown }).elicitations : undefined;
  if (!Array.isArray(list) || list.length === 0)
    throw elicitationRefused('its URL elicitation required error (-32042) lists no page', error);
  if (list.length > MAX_ELICITATIONS_PER_ERROR) {
    throw elicitationRefused(`it asks for ${list.length} pages at once (at most ${MAX_ELICITATIONS_PER_ERROR} are shown)`, error);
  }
  return list.map((entry) => urlElicitationPrompt(entry));
}
