import { ERR, McpAuthError } from '../errors.js';
import { assertAllowedUrl } from '../url.js';

/**
 * Longest URL a user is asked to open. The user MUST be shown the full URL to examine before
 * consenting (MCP 2025-11-25 elicitation §Safe URL Handling); one longer than this cannot be
 * examined on a screen, and a connect or sign-in page needs far less.
 */
export const MAX_ELICITATION_URL_LENGTH = 4096;

/** A URL an MCP server asked the user to open, checked and ready to show. */
export interface ElicitationTarget {
  /** The parsed URL: https, or http to a loopback host, without user name or password. */
  url: URL;
  /**
   * The host the browser will really connect to, as the URL parser resolves it (with its port,
   * when one is given): an internationalized name stays in its punycode form (`xn--…`), IPv6 in
   * brackets, so look-alike characters cannot pose as another host.
   */
  host: string;
  /** True when a label of the host is punycode (`xn--`): show a warning (§Safe URL Handling, SHOULD). */
  punycode: boolean;
}

/**
 * Checks the `url` of a URL-mode elicitation before anyone is asked to open it (MCP 2025-11-25
 * elicitation §Safe URL Handling): it must parse, be https or http to a loopback host (the one
 * rule of `assertAllowedUrl`: `javascript:`, `data:`, `file:` … never), carry no user name or
 * password (`https://trusted.example@evil.example/` shows one host and opens another), and be
 * short enough to be read. Throws `MCP_AUTH_ELICITATION_REFUSED`; the message never quotes the URL.
 */
export function checkElicitationUrl(input: unknown): ElicitationTarget {
  if (typeof input !== 'string' || input === '') throw elicitationRefused('the "url" of the request is not a string');
  if (input.length > MAX_ELICITATION_URL_LENGTH) {
    throw elicitationRefused(`the URL is longer than ${MAX_ELICITATION_URL_LENGTH} characters, too long to be checked by a person`);
  }
  let url: URL;
  try {
    url = assertAllowedUrl(input, 'the URL');
  } catch (cause) {
    throw elicitationRefused(cause instanceof McpAuthError ? cause.message : 'the URL is not valid', cause);
  }
  if (url.username !== '' || url.password !== '') {
    throw elicitationRefused('the URL carries a user name or password, which would hide the host it really opens');
  }
  return { url, host: url.host, punycode: url.hostname.split('.').some((label) => label.toLowerCase().startsWith('xn--')) };
}

/** `MCP_AUTH_ELICITATION_REFUSED`: a URL elicitation refused before the user was asked, and why. */
export function elicitationRefused(reason: string, cause?: unknown): McpAuthError {
  return new McpAuthError(
    ERR.ELICITATION_REFUSED,
    `the MCP server asked to open a page, which was refused without asking you: ${reason}`,
    cause === undefined ? {} : { cause },
  );
}
