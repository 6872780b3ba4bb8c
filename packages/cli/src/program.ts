import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { createTerminal, joinText, ownLayout, terminalText, visibleText, type Terminal } from '@mcp-auth-kit/protocol';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import {
  ERR,
  FileStore,
  McpAuthClient,
  McpAuthError,
  createAuthFetch,
  defaultStoreDir,
  type AccessCheck,
  type McpAuthClientOptions,
  type ServerStatus,
} from '@mcp-auth-kit/client';
import { serverKey } from '@mcp-auth-kit/client/core';
import { join } from 'node:path';
import { inCi, openBrowser } from './browser.js';
import { describeEvent } from './events.js';
import { explainError } from './explain.js';
import { formatStatus, isExpired } from './status-view.js';
import { accountLabel } from './account.js';
import { parseToolArguments } from './tool-arguments.js';
import { cliVersion } from './version.js';
import { isEventStream, observeBody, type StreamDeadlines } from './mcp-body.js';
import type { CliInput } from './line-input.js';
import { EXIT_NEEDS_USER, withUrlElicitation, type CliElicitationContext } from './url-elicitation-prompt.js';
import { registerDoctor } from './doctor/command.js';
import { addMachineOptions, MACHINE_LOGIN_HELP, machineOptions, secretOf, type MachineOpts } from './machine-login.js';

/** Raw streams: the CLI prints only through the {@link Terminal} built from them. */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: NodeJS.ProcessEnv;
  /** Replaces the browser opener (tests). */
  open?: (url: URL) => Promise<boolean>;
  /** True when stdout is a terminal: `doctor` colours its report then (unless NO_COLOR). */
  colour?: boolean;
  /** Standard input: URL elicitation asks the user only when it is a terminal (and CI is not set). */
  stdin?: NodeJS.ReadableStream & { isTTY?: boolean };
}

interface GlobalOpts extends MachineOpts {
  home?: string;
  browser: boolean;
  clientMetadataUrl?: string;
  timeout: string;
  requestTimeout: string;
  privateNetworks: 'auto' | 'block' | 'allow';
}

/** What the commands get: the sanitising terminal, never the raw streams. */
interface CliContext {
  term: Terminal;
  env: NodeJS.ProcessEnv;
  open: (url: URL) => Promise<boolean>;
  input?: CliInput | undefined;
  /** The MCP server the running command is about (for error advice). */
  server?: string;
}

function requestTimeoutMs(opts: GlobalOpts): number {
  return Number(opts.requestTimeout) * 1000;
}

/** The network deadline of each request, and the time a user has in the browser (both ms). */
interface McpLimits {
  requestMs: number;
  browserMs: number;
}

/** What a command does with the connected MCP client, within the SDK request `options`. */
type McpWork<T> = (c: Client, options: { timeout: number }) => Promise<T>;

function mcpLimits(opts: GlobalOpts): McpLimits {
  return { requestMs: requestTimeoutMs(opts), browserMs: Number(opts.timeout) * 1000 };
}

/** How `tools` and `call` ask about a page the MCP server at `url` sends the user to (url-elicitation-prompt.ts). */
function elicitationContext(url: string, opts: GlobalOpts, ctx: CliContext): CliElicitationContext {
  return {
    term: ctx.term,
    env: ctx.env,
    open: ctx.open,
    input: ctx.input,
    server: url,
    browser: opts.browser,
    timeoutSeconds: Number(opts.timeout),
  };
}

/** Rounds of one 2026-07-28 multi round-trip request: each may ask the user again. */
const MAX_INPUT_ROUNDS = 4;

function makeClient(opts: GlobalOpts, ctx: CliContext, extra: Partial<McpAuthClientOptions> = {}): McpAuthClient {
  const { term, env } = ctx;
  const home = opts.home ?? defaultStoreDir(env);
  const options: McpAuthClientOptions = {
    clientName: 'mcp-auth-kit CLI',
    store: new FileStore(join(home, 'store.json'), { onRepair: (message) => term.err(terminalText`${message}\n`) }),
    authorizationTimeoutMs: Number(opts.timeout) * 1000,
    requestTimeoutMs: requestTimeoutMs(opts),
    privateNetworks: opts.privateNetworks,
    onEvent: (e) => {
      const text = describeEvent(e);
      if (text) term.err(joinText([text, ownLayout('\n')]));
    },
    openAuthorizationUrl: async (url) => {
      term.err(terminalText`Open this URL to authorize:\n\n  ${url.href}\n\n`);
      const byHand = `open the URL above by hand in a browser on this computer (the answer comes back to 127.0.0.1); waiting ${opts.timeout} s.`;
      if (!opts.browser) return;
      if (inCi(env)) return term.err(terminalText`CI is set, so no browser is opened: ${byHand}\n`);
      if (!(await ctx.open(url))) term.err(terminalText`Could not open a browser on this machine: ${byHand}\n`);
    },
  };
  if (opts.clientMetadataUrl) options.clientMetadataUrl = opts.clientMetadataUrl;
  const interactive = {
    openAuthorizationUrl: options.openAuthorizationUrl!,
    onWaiting: (redirectUri: string) => options.onEvent?.({ type: 'waiting_for_callback', redirectUri }),
  };
  const credentials = machineOptions(opts, env, interactive) ?? clientCredentialOptions(opts, env);
  if (credentials) Object.assign(options, credentials);
  return new McpAuthClient({ ...options, ...extra });
}

/**
 * MCP Authorization Server Binding: a client id or secret from the command line is bound to the
 * `--issuer` that issued it, so it is refused without one (before any request) rather than sent to
 * whichever authorization server the MCP server names.
 */
function clientCredentialOptions(
  opts: GlobalOpts,
  env: NodeJS.ProcessEnv,
): Pick<McpAuthClientOptions, 'clientCredentials' | 'preRegistered'> | undefined {
  // --client-credentials and --enterprise: machine-login.ts
  const secret = opts.clientSecret ?? secretOf(opts, env);
  if ((opts.clientSecret !== undefined || opts.clientSecretFile !== undefined) && !opts.clientId) {
    throw new McpAuthError('MCP_AUTH_INVALID_ARGUMENT', '--client-secret needs --client-id and --issuer');
  }
  if (!opts.clientId) return undefined;
  if (!opts.issuer)
    throw new McpAuthError('MCP_AUTH_INVALID_ARGUMENT', '--client-id needs --issuer (credentials are bound to one authorization server)');
  return { preRegistered: [{ issuer: opts.issuer, client_id: opts.clientId, ...(secret !== undefined && { client_secret: secret }) }] };
}

/**
 * One-shot MCP commands end within --request-timeout per network request: the library bounds the
 * MCP server's response headers and JSON answers; here the SSE answer to a POST must end within
 * it too (a one-shot command waits for no long-lived stream). The SDK's own request timeout (60 s
 * by default) becomes --timeout + --request-timeout: a request that needs a sign-in holds the
 * browser wait inside it, which the network deadlines must not cut short.
 */
async function withMcp<T>(url: string, auth: McpAuthClient, limits: McpLimits, asking: CliElicitationContext, fn: McpWork<T>): Promise<T> {
  // Once the user was asked something (a server's elicitation/create may come on any stream, even
  // before the answer to the request it belongs to has begun), the server waits for a person, not
  // the network: every SSE answer, open or still to come, gets the browser wait again from then on.
  const sse: StreamDeadlines = { ms: limits.requestMs, open: new Set() };
  const userTime = () => {
    sse.ms = limits.browserMs + limits.requestMs;
    for (const extend of sse.open) extend(sse.ms);
  };
  return withUrlElicitation({ ...asking, onUserTime: userTime }, (elicitation) =>
    withMcpClient(url, auth, limits, sse, (c, o) => elicitation.call(() => fn(c, o)), elicitation.attach),
  );
}

/** `fn` on an MCP client connected to `url` (prepared by `prepare` first), its SSE answers held to `sse`. */
async function withMcpClient<T>(
  url: string,
  auth: McpAuthClient,
  limits: McpLimits,
  sse: StreamDeadlines,
  fn: McpWork<T>,
  prepare: (c: Client) => void,
): Promise<T> {
  const client = new Client(
    { name: 'mcp-auth-kit', version: cliVersion() },
    {
      inputRequired: { maxRounds: MAX_INPUT_ROUNDS },
      // MCP 2026-07-28 when the server speaks it (server/discover), else the 2025-11-25 initialize
      versionNegotiation: { mode: 'auto' },
    },
  );
  prepare(client);
  const options = { timeout: limits.browserMs + limits.requestMs };
  // The SDK reports a failed SSE stream (an event over maxMessageBytes, a deadline) only to
  // onerror, as text, and lets the request run into its timeout: the refusal is kept, the
  // connection closed at once (failing the pending request), and the refusal is what the user is told.
  let refusal: McpAuthError | undefined;
  // ...and a request the SDK runs on its own (the server/discover probe of version negotiation)
  // may not fail on close: the refusal ends the command in any case.
  let refuse: (err: McpAuthError) => void = () => undefined;
  const refused = new Promise<never>((_, reject) => (refuse = reject));
  refused.catch(() => undefined);
  const authFetch = createAuthFetch(auth);
  const fetch: typeof authFetch = async (input, init) => {
    const res = await authFetch(input, init);
    const post = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase() === 'POST';
    const origin = new URL(input instanceof Request ? input.url : String(input)).origin;
    return observeBody(res, post && isEventStream(res) ? { sse, origin } : undefined, (err) => {
      if (!(err instanceof McpAuthError) || refusal) return;
      refusal = err;
      refuse(err);
      void client.close().catch(() => undefined);
    });
  };
  try {
    await Promise.race([client.connect(new StreamableHTTPClientTransport(new URL(url), { fetch }), options), refused]);
    return await Promise.race([fn(client, options), refused]);
  } catch (err) {
    throw refusal ?? err;
  } finally {
    await client.close().catch(() => undefined);
  }
}

/** What each command gets: the context, the global options as parsed, and the exit code to set. */
interface CommandDeps {
  ctx: CliContext;
  globals: () => GlobalOpts;
  setExitCode: (code: number) => void;
}

const MCP_URL = 'the MCP endpoint URL, e.g. http://localhost:3000/mcp';

/** Builds the `mcp-auth-kit` command line program. */
export function createProgram(io: CliIo, setExitCode: (code: number) => void = () => undefined): Command {
  const term = createTerminal(io);
  const ctx: CliContext = { term, env: io.env, open: io.open ?? ((u: URL) => openBrowser(u, process.platform, io.env)), input: io.stdin };
  const program = new Command('mcp-auth-kit');
  addGlobalOptions(program, term);
  addMachineOptions(program);
  const globals = () => program.opts<GlobalOpts>();
  // issue 45; the throwaway login holds a plain bearer token, which the doctor can send itself
  registerDoctor(program, {
    raw: io,
    env: io.env,
    setExitCode,
    clientId: () => globals().clientId,
    issuer: () => globals().issuer,
    login: (url, home, allowPrivate) =>
      makeClient({ ...globals(), home, ...(allowPrivate && { privateNetworks: 'allow' as const }) }, ctx, { dpop: 'never' }).authorize(url),
  });
  const deps: CommandDeps = { ctx, globals, setExitCode };
  registerLogin(program, deps);
  registerStatus(program, deps);
  registerLogout(program, deps);
  registerTools(program, deps);
  registerCall(program, deps);
  return program;
}

/** The options every command shares, the help text on time limits, and how the program prints and exits. */
function addGlobalOptions(program: Command, term: Terminal): void {
  program
    .description('Log in to OAuth-protected MCP servers and call their tools')
    .option('--home <dir>', 'where tokens are stored (default: $MCP_AUTH_KIT_HOME or $XDG_CONFIG_HOME/mcp-auth-kit)')
    .option('--no-browser', 'only print the authorization URL, never open a browser')
    .option('--client-metadata-url <url>', "https URL of this client's Client ID Metadata Document")
    .option('--client-id <id>', 'pre-registered client_id (with --issuer)')
    .option(
      '--client-secret <secret>',
      'pre-registered client secret (prefer $MCP_AUTH_KIT_CLIENT_SECRET: arguments are visible to other users)',
    )
    .option(
      '--issuer <issuer>',
      'issuer of the authorization server the client id and secret belong to (required with them: they are sent nowhere else)',
    )
    .option(
      '--client-credentials',
      'machine-to-machine (no browser): --client-id and --issuer with a secret ($MCP_AUTH_KIT_CLIENT_SECRET or --client-secret-file) or --private-key',
    )
    .addOption(new Option('--timeout <seconds>', 'how long to wait for the browser').default('300').argParser(parseSeconds))
    .addOption(
      new Option(
        '--request-timeout <seconds>',
        'deadline of each network request (a whole OAuth answer; the response headers and whole answer of the MCP server)',
      )
        .default('30')
        .argParser(parseSeconds),
    )
    .addOption(
      new Option(
        '--private-networks <mode>',
        'addresses the OAuth requests an MCP server names may reach: auto (public; loopback for a local server), block (public only), allow (any, for a trusted intranet)',
      )
        .choices(['auto', 'block', 'allow'])
        .default('auto'),
    )
    .addHelpText(
      'after',
      [
        '',
        'Time limits: every network request ends within --request-timeout seconds (default 30): the whole answer',
        'of an authorization server, the headers and whole answer (JSON, or SSE answering a POST of tools and call)',
        'of an MCP server. An MCP message (JSON answer or SSE event) over 8 MiB is refused. A command makes a bounded number of',
        'requests; login, tools and call also wait up to --timeout seconds (default 300) for the browser, and any',
        'command waits at most 60 s for another mcp-auth-kit process that holds the token store.',
        '',
      ].join('\n'),
    )
    .version(cliVersion(), '-V, --version', 'print the version of mcp-auth-kit')
    // Help and argument errors: the program's own text (and the user's own arguments).
    .configureOutput({ writeOut: (text) => term.out(ownLayout(text)), writeErr: (text) => term.err(ownLayout(text)) })
    .exitOverride()
    .showHelpAfterError('(run `mcp-auth-kit --help` for the commands and options)');
}

/** A command about one MCP server: its first argument is the server's endpoint URL (run() reads it for error advice). */
function mcpCommand(program: Command, name: string, description: string): Command {
  return program.command(name).description(description).argument('<mcp-url>', MCP_URL, parseMcpUrl);
}

function registerLogin(program: Command, { ctx, globals }: CommandDeps): void {
  const { term } = ctx;
  mcpCommand(program, 'login', 'authorize against an MCP server and store the tokens')
    .option('--scope <scope>', "scope to request instead of the server's guidance")
    .addHelpText('after', MACHINE_LOGIN_HELP)
    .action(async (url: string, cmd: { scope?: string }) => {
      const auth = makeClient(globals(), ctx);
      const tokens = await auth.authorize(url, cmd.scope ? { scope: cmd.scope } : {});
      term.out(terminalText`Logged in to ${tokens.resource} via ${tokens.issuer}${tokens.scope ? ` (scope: ${tokens.scope})` : ''}\n`);
      // RFC 8252 §8.3: another local user can race the loopback redirect with a code of their own;
      // the account is what shows it.
      term.out(
        tokens.account
          ? terminalText`Signed in ${accountLabel(tokens.account, tokens.issuer)}: if that is not your account, run \`mcp-auth-kit logout ${url}\` now.\n`
          : terminalText`The authorization server did not say which account signed in.\n`,
      );
    });
}

function registerStatus(program: Command, { ctx, globals, setExitCode }: CommandDeps): void {
  const { term } = ctx;
  program
    .command('status')
    .description('list the servers with stored tokens and when their access tokens expire')
    .option('--json', 'machine-readable output')
    .option(
      '--check',
      'ask each MCP server whether it accepts the access token (valid / expired / revoked); exit code 1 unless all are valid',
    )
    .action(async (cmd: { json?: boolean; check?: boolean }) => {
      const auth = makeClient(globals(), ctx);
      const rows = await auth.status();
      const now = Math.floor(Date.now() / 1000);
      const checks = new Map<string, AccessCheck | Error>();
      if (cmd.check) {
        for (const r of rows) checks.set(r.server, await auth.checkAccess(r.server).catch((err: unknown) => asError(err)));
        if ([...checks.values()].some((c) => c instanceof Error || c.result !== 'valid')) setExitCode(1);
      }
      if (cmd.json) {
        return term.json(
          rows.map((r) => {
            const check = checks.get(r.server);
            return {
              ...r,
              expired: isExpired(r, now),
              ...(check && { check: check instanceof Error ? { result: 'error', message: check.message } : check }),
            };
          }),
        );
      }
      if (rows.length === 0) return term.out(terminalText`Not logged in to any MCP server. Log in with: mcp-auth-kit login <mcp-url>\n`);
      // formatStatus lays out values made visible first: the result is the program's layout.
      for (const r of rows) term.out(ownLayout(formatStatus(visibleRow(r), now, visibleCheck(checks.get(r.server)))));
    });
}

function registerLogout(program: Command, { ctx, globals }: CommandDeps): void {
  const { term } = ctx;
  program
    .command('logout')
    .description('revoke and forget the tokens of one MCP server, or of all')
    .argument('[mcp-url]', 'the MCP endpoint URL (default: every server)', parseMcpUrl)
    .action(async (url?: string) => {
      const auth = makeClient(globals(), ctx);
      const known = (await auth.status()).map((r) => r.server);
      if (url && !known.includes(serverKey(url))) return term.out(terminalText`No tokens stored for ${url}: nothing to log out of.\n`);
      if (!url && known.length === 0) {
        // records no server binding names any more (an earlier authorization server's) still go
        await auth.logout();
        return term.out(terminalText`No tokens stored: nothing to log out of.\n`);
      }
      await auth.logout(url);
      term.out(
        url
          ? terminalText`Logged out of ${url}\n`
          : terminalText`Logged out of ${known.length} MCP server${known.length === 1 ? '' : 's'}\n`,
      );
    });
}

function registerTools(program: Command, { ctx, globals }: CommandDeps): void {
  const { term } = ctx;
  mcpCommand(program, 'tools', 'list the tools of an MCP server (logs in when needed)')
    .option('--json', 'print the raw tools/list result')
    .action(async (url: string, cmd: { json?: boolean }) => {
      const { tools } = await withMcp(
        url,
        makeClient(globals(), ctx),
        mcpLimits(globals()),
        elicitationContext(url, globals(), ctx),
        (c, o) => c.listTools(undefined, o),
      );
      if (cmd.json) return term.json(tools);
      if (tools.length === 0) return term.out(terminalText`The server offers no tools.\n`);
      for (const t of tools) term.out(terminalText`${t.name}${t.description ? ` — ${t.description}` : ''}\n`);
    });
}

function registerCall(program: Command, { ctx, globals, setExitCode }: CommandDeps): void {
  mcpCommand(program, 'call', 'call a tool with JSON arguments (logs in and steps up when needed); prints the result as JSON')
    .argument('<tool>', 'the tool name, as `tools` lists it')
    .argument('[json]', `the tool's arguments as a JSON object, e.g. '{"text":"hello"}'`, '{}')
    .addHelpText('after', '\nExample:\n  mcp-auth-kit call http://localhost:3000/mcp add_note \'{"text":"hello"}\'\n')
    .action(async (url: string, tool: string, json: string) => {
      const args = parseToolArguments(json);
      const result = await withMcp(url, makeClient(globals(), ctx), mcpLimits(globals()), elicitationContext(url, globals(), ctx), (c, o) =>
        c.callTool({ name: tool, arguments: args }, o),
      );
      ctx.term.json(result);
      if ((result as { isError?: boolean }).isError) setExitCode(1);
    });
}

/** `<mcp-url>`: an http(s) URL, said plainly before anything is sent. */
function parseMcpUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError(`"${value}" is not a URL; give the MCP endpoint with its scheme, e.g. http://localhost:3000/mcp.`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new InvalidArgumentError(`"${value}" is not an http(s) URL; give the MCP endpoint, e.g. https://mcp.example.com/mcp.`);
  }
  return value;
}

function parseSeconds(value: string): string {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError(`"${value}" is not a number of seconds greater than 0.`);
  return value;
}

/** A status row with every string made visible, so formatStatus only adds layout. */
function visibleRow(row: ServerStatus): ServerStatus {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(row)) out[k] = typeof v === 'string' ? visibleText(v) : v;
  return out as unknown as ServerStatus;
}

function visibleCheck(check: AccessCheck | Error | undefined): AccessCheck | Error | undefined {
  if (!check) return undefined;
  if (check instanceof Error) return new Error(visibleText(check.message));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(check)) out[k] = typeof v === 'string' ? visibleText(v) : v;
  return out as unknown as AccessCheck;
}

function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}

/** Runs the CLI; returns the exit code. Errors say what happened and what to do, without stacks or secrets. */
export async function run(argv: string[], io: CliIo): Promise<number> {
  let exitCode = 0;
  const term = createTerminal(io);
  const program = createProgram(io, (c) => (exitCode = c));
  let server: string | undefined;
  program.hook('preAction', (_program, action) => {
    const first = action.registeredArguments[0];
    if (first?.name() === 'mcp-url' && typeof action.processedArgs[0] === 'string') server = action.processedArgs[0];
  });
  try {
    await program.parseAsync(argv, { from: 'user' });
    return exitCode;
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode;
    const timeoutSeconds = Number(program.opts<GlobalOpts>().timeout) || 300;
    term.err(explainError(err, { server, timeoutSeconds }));
    return err instanceof McpAuthError && err.code === ERR.INTERACTION_REQUIRED ? EXIT_NEEDS_USER : 1;
  }
}
