import { joinText, terminalText, type Terminal, type TerminalText } from '@mcp-auth-kit/protocol';
import {
  createUrlElicitation,
  ERR,
  McpAuthError,
  type UrlElicitation,
  type UrlElicitationAction,
  type UrlElicitationPrompt,
} from '@mcp-auth-kit/client';
import { inCi } from './browser.js';
import { lineInput, type CliInput } from './line-input.js';

/** Longest part of a server's elicitation message shown, in code points: it explains, the host and URL decide. */
export const MAX_SHOWN_MESSAGE_LENGTH = 500;

/** Exit code of a command that needs a person to open a page and had no terminal to ask one. */
export const EXIT_NEEDS_USER = 3;

export interface CliElicitationContext {
  term: Terminal;
  env: NodeJS.ProcessEnv;
  /** The browser opener (no shell; the CLI's `openBrowser` or a test's). */
  open: (url: URL) => Promise<boolean>;
  /** Standard input; the user is asked only when it is a terminal and CI is not set. */
  input?: CliInput | undefined;
  /** The MCP server URL the command talks to: the one asking. */
  server: string;
  /** False with `--no-browser`: the user opens the page themselves. */
  browser: boolean;
  /** `--timeout`: the longest wait for the page to be finished. */
  timeoutSeconds: number;
  /**
   * Called when the user is asked and when they have answered: a server that sent the question
   * on its answer stream now waits for a person, so network deadlines start again.
   */
  onUserTime?: () => void;
}

/**
 * Runs `run` with URL-mode elicitation the CLI's way (MCP 2025-11-25 client/elicitation §Safe
 * URL Handling): the server's message (terminal-safe, bounded), the full URL and its real host
 * are shown, then "Open <host> in your browser? [y/N]"; yes opens the browser without a shell,
 * then "Press Enter when you have finished in the browser" (or the server's completion
 * notification, whichever comes first) and the request is retried. Without a terminal to ask (no
 * TTY, or CI set) nothing is opened: the host and the URL are printed, the URL on a line of its
 * own, and the command fails with `MCP_AUTH_INTERACTION_REQUIRED` (exit code {@link EXIT_NEEDS_USER})
 * instead of waiting.
 */
export async function withUrlElicitation<T>(ctx: CliElicitationContext, run: (elicitation: UrlElicitation) => Promise<T>): Promise<T> {
  const { term } = ctx;
  const lines = ctx.input?.isTTY === true && !inCi(ctx.env) ? lineInput(ctx.input) : undefined;
  let unasked: UrlElicitationPrompt | undefined;
  const elicitation = createUrlElicitation({
    completionTimeoutMs: ctx.timeoutSeconds * 1000,
    onUrlElicitation: async (prompt): Promise<UrlElicitationAction> => {
      ctx.onUserTime?.();
      term.err(describePrompt(prompt, new URL(ctx.server).host));
      if (!lines) {
        unasked ??= prompt;
        term.err(
          terminalText`No terminal to ask you (standard input is not a terminal, or CI is set), so nothing was opened.\nTo continue, open this URL in a browser, finish there, then run the command again:\n${prompt.url.href}\n`,
        );
        return 'cancel';
      }
      term.err(terminalText`Open ${prompt.host} in your browser? [y/N] `);
      const answer = await lines.next();
      ctx.onUserTime?.();
      if (answer === undefined) {
        term.err(terminalText`\n`);
        return 'cancel';
      }
      return /^\s*y(es)?\s*$/i.test(answer) ? 'accept' : 'decline';
    },
    openUrl: async (url) => {
      if (!ctx.browser) return term.err(terminalText`(--no-browser) Open the URL above in a browser yourself.\n`);
      if (!(await ctx.open(url))) term.err(terminalText`Could not open a browser on this machine: open the URL above by hand.\n`);
    },
    waitForCompletion: async (_prompt, signal) => {
      if (!lines) return;
      term.err(terminalText`Press Enter when you have finished in the browser (waiting up to ${ctx.timeoutSeconds} s). `);
      await lines.next(signal);
      // ended by the server's completion notification or the time limit: the prompt's line is left open
      if (signal.aborted) term.err(terminalText`\n`);
    },
    onRefused: (err) => term.err(terminalText`${err.message}\n`),
  });
  try {
    const result = await run(elicitation);
    if (unasked) throw needsUser(unasked);
    return result;
  } catch (err) {
    throw unasked ? needsUser(unasked, err) : err;
  } finally {
    lines?.close();
  }
}

/** Who asks, what for (bounded), the full URL to examine, and a warning for a punycode host. */
function describePrompt(prompt: UrlElicitationPrompt, serverHost: string): TerminalText {
  const points = [...prompt.message];
  const message = points.length > MAX_SHOWN_MESSAGE_LENGTH ? `${points.slice(0, MAX_SHOWN_MESSAGE_LENGTH).join('')}…` : prompt.message;
  const parts = [
    terminalText`The MCP server at ${serverHost} asks you to open a page on ${prompt.host}:\n`,
    ...(message.trim() === '' ? [] : [terminalText`  ${message}\n`]),
    terminalText`  ${prompt.url.href}\n`,
  ];
  if (prompt.punycode) {
    parts.push(
      terminalText`  Warning: ${prompt.host} is an internationalized name, shown in its punycode form: make sure it is the site you expect.\n`,
    );
  }
  return joinText(parts);
}

function needsUser(prompt: UrlElicitationPrompt, cause?: unknown): McpAuthError {
  return new McpAuthError(
    ERR.INTERACTION_REQUIRED,
    `the MCP server needs you to open a page on ${prompt.host} in a browser, and there is no terminal to ask you`,
    cause === undefined ? {} : { cause },
  );
}
