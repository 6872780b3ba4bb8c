import { joinText, terminalText, type TerminalText } from '@mcp-auth-kit/protocol';
import { ERR, McpAuthError, type McpAuthErrorCode } from '@mcp-auth-kit/client';
import { networkFailureReason } from '@mcp-auth-kit/client/core';
import { EXIT_NEEDS_USER } from './url-elicitation-prompt.js';

/** What the failing command was about, for the advice. */
export interface ErrorContext {
  /** The MCP server URL the command was given, when it has one. */
  server?: string | undefined;
  /** `--timeout`, in seconds. */
  timeoutSeconds: number;
}

/**
 * Every error the CLI prints, as two parts: what happened (first line, with the library code for
 * bug reports) and what to do about it (second line). Each part is data to the writer: a
 * message that carries a server's text (an `error_description`, a forged code) shows its newlines
 * and escape sequences as visible escapes, so it can never print a line of its own.
 */
export function explainError(err: unknown, ctx: ErrorContext): TerminalText {
  const { what, todo, code } = describe(err, ctx);
  const head = terminalText`error: ${what}${code ? ` [${code}]` : ''}\n`;
  return todo ? joinText([head, terminalText`${todo}\n`]) : head;
}

interface Explained {
  what: string;
  todo?: string | undefined;
  code?: string | undefined;
}

const loginAgain = (ctx: ErrorContext) => `mcp-auth-kit login ${ctx.server ?? '<mcp-url>'}`;

const SERVER_PROBLEM = 'This is a problem of the server configuration, not of your command: tell its operator.';

/** What to do about an error of each library code: the advice, or how to word it for this error. */
const ADVICE: Partial<Record<McpAuthErrorCode, string | ((err: McpAuthError, ctx: ErrorContext) => string)>> = {
  [ERR.SERVER_UNREACHABLE]: (err) =>
    err.message.includes('authorization server')
      ? 'The MCP server sends you to this authorization server: check that it is running and reachable from this machine.'
      : 'Check that the server is running and that the URL (scheme, host and port) is right.',
  [ERR.PRM_NOT_FOUND]:
    'Check the URL: it must be the MCP endpoint itself (e.g. http://localhost:3000/mcp). A server without OAuth protection publishes no such metadata and needs no login.',
  [ERR.PRM_RESOURCE_MISMATCH]: (err) => {
    const named = /"resource" \((https?:\/\/[^\s)]+)\)/.exec(err.message)?.[1];
    return `Use exactly the URL the server names as its resource${named ? ` (${named})` : ''}: for OAuth, localhost and 127.0.0.1, or another path, are different servers.`;
  },
  [ERR.PRM_INVALID]: SERVER_PROBLEM,
  [ERR.AS_METADATA_INVALID]: SERVER_PROBLEM,
  [ERR.AS_ISSUER_MISMATCH]: SERVER_PROBLEM,
  [ERR.AS_METADATA_NOT_FOUND]: SERVER_PROBLEM,
  [ERR.PKCE_NOT_SUPPORTED]: SERVER_PROBLEM,
  [ERR.WWW_AUTHENTICATE_PARSE]: SERVER_PROBLEM,
  [ERR.URL_FORBIDDEN]: 'The request was not sent. Only if you trust every server involved, allow it as the message says.',
  [ERR.AS_MISMATCH]:
    'The --client-id and --issuer you gave are for another authorization server: pass a client registered at the one the MCP server names, or leave them out.',
  [ERR.REGISTRATION_UNAVAILABLE]:
    'This authorization server does not let clients register themselves: register one there and pass --client-id and --issuer (or --client-metadata-url if it accepts metadata documents).',
  [ERR.REGISTRATION_REJECTED]:
    'The authorization server refused to register this CLI: ask its operator for a client id and pass --client-id and --issuer.',
  [ERR.AUTHORIZATION_DENIED]: (err, ctx) =>
    err.error === 'invalid_scope'
      ? 'The scope asked for is not allowed: try `login --scope` with scopes the server lists, or leave --scope out.'
      : `Run \`${loginAgain(ctx)}\` again; if it is refused again, ask the authorization server's operator.`,
  [ERR.AUTHORIZATION_RESPONSE_INVALID]: (_err, ctx) =>
    `The answer that reached this CLI did not belong to this sign-in, so no code was redeemed. Run \`${loginAgain(ctx)}\` again.`,
  [ERR.AUTHORIZATION_TIMEOUT]:
    'Open the URL printed above in a browser on this computer (the answer comes back to 127.0.0.1), sign in and allow access in time, or give more time with --timeout <seconds>.',
  [ERR.TOKEN_REQUEST_FAILED]: (err, ctx) =>
    err.error === 'invalid_grant'
      ? `The code or token was not accepted (expired or already used): run \`${loginAgain(ctx)}\` again.`
      : `Run \`${loginAgain(ctx)}\` again; if it fails again, ask the authorization server's operator.`,
  [ERR.RESPONSE_TOO_LARGE]: `${SERVER_PROBLEM} Nothing of the answer was kept.`,
  [ERR.STORE_UNSAFE]:
    'The token store was not read or written. Fix its owner or permissions as the message says, or keep tokens in a folder only you can write with --home <dir> (or MCP_AUTH_KIT_HOME).',
  [ERR.STORE_BUSY]: 'Another mcp-auth-kit process is still using the token store: wait for it to finish, then run the command again.',
  [ERR.ELICITATION_REFUSED]:
    'Nothing was opened: only https pages (or http on this machine) that show their real host are. Tell the server operator.',
  [ERR.ELICITATION_DECLINED]: 'To go on, run the command again and answer y to open the page.',
  [ERR.ELICITATION_CANCELLED]: 'To go on, run the command again and answer y to open the page.',
  [ERR.ELICITATION_LIMIT]:
    'Finish on the page (sign in and allow access there) before pressing Enter, then run the command again; if the server keeps asking, tell its operator.',
  [ERR.INTERACTION_REQUIRED]: `Open the URL printed above in a browser and finish there, then run the command again; or run it in a terminal, where it asks you (exit code ${EXIT_NEEDS_USER}).`,
  [ERR.STEP_UP_LIMIT]: 'Your account was not granted the permissions this request needs: ask the server operator.',
};

function describe(err: unknown, ctx: ErrorContext): Explained {
  if (!(err instanceof McpAuthError)) return describeOther(err, ctx);
  const { code } = err;
  if (code === ERR.AUTHORIZATION_DENIED && err.error === 'access_denied') {
    return {
      what: 'you denied access in the browser (access_denied)',
      code,
      todo: `Nothing was stored. To allow access, run \`${loginAgain(ctx)}\` again and choose Allow.`,
    };
  }
  // the library's message names no time: the user's --timeout is what they can change
  const what = code === ERR.AUTHORIZATION_TIMEOUT ? `no answer came back from the browser within ${ctx.timeoutSeconds} s` : err.message;
  const advice = ADVICE[code];
  if (advice === undefined) return { what, code };
  return { what, code, todo: typeof advice === 'string' ? advice : advice(err, ctx) };
}

/** Errors from the MCP SDK and Node: a server that does not answer, or one that answers with an error. */
function describeOther(err: unknown, ctx: ErrorContext): Explained {
  const reason = networkFailureReason(err);
  if (reason) {
    return {
      what: `the MCP server at ${ctx.server ?? 'the given URL'} did not answer (${reason})`,
      code: ERR.SERVER_UNREACHABLE,
      todo: 'Check that the server is running and that the URL (scheme, host and port) is right.',
    };
  }
  const message = err instanceof Error ? err.message : String(err);
  const status = /\bHTTP (\d{3})\b|\((\d{3})\)|status(?: code)? (\d{3})/i.exec(message);
  const code = status?.[1] ?? status?.[2] ?? status?.[3];
  if (code === '403') {
    return {
      what: `the MCP server refused the request (HTTP 403): ${message}`,
      todo: 'Your account lacks a permission this request needs, even after asking for more: ask the server operator.',
    };
  }
  if (/not found|unknown tool|-32602|-32601/i.test(message)) {
    return {
      what: `the MCP server refused the request: ${message}`,
      todo: `List what it offers with \`mcp-auth-kit tools ${ctx.server ?? '<mcp-url>'}\`.`,
    };
  }
  return { what: `the MCP server failed: ${message}`, todo: 'If it persists, tell the server operator (with the message above).' };
}
