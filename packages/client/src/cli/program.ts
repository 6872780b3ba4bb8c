import { Command, CommanderError, Option } from 'commander';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { McpAuthClient } from '../client/mcp-auth-client.js';
import { createAuthFetch } from '../client/sdk-adapters.js';
import type { McpAuthClientOptions, McpAuthEvent } from '../client/options.js';
import { McpAuthError } from '../errors.js';
import { FileStore, defaultStoreDir } from '../file-store.js';
import { join } from 'node:path';
import { inCi, openBrowser } from './browser.js';
import { createTerminal, type Terminal } from './terminal.js';

/** Raw streams: the CLI prints only through the {@link Terminal} built from them. */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: NodeJS.ProcessEnv;
  /** Replaces the browser opener (tests). */
  open?: (url: URL) => Promise<boolean>;
}

interface GlobalOpts {
  home?: string;
  browser: boolean;
  clientMetadataUrl?: string;
  clientId?: string;
  clientSecret?: string;
  issuer?: string;
  clientCredentials?: boolean;
  timeout: string;
  privateNetworks: 'auto' | 'block' | 'allow';
}

function describeEvent(e: McpAuthEvent): string | undefined {
  switch (e.type) {
    case 'discovered':
      return `Discovered ${e.resource} (authorization server ${e.issuer})`;
    case 'authorization_server_changed':
      return `Authorization server changed from ${e.from} to ${e.to}: registering again`;
    case 'registered':
      return `Client ${e.source === 'cimd' ? 'metadata document' : 'registration'} ready at ${e.issuer}`;
    case 'waiting_for_callback':
      return 'Waiting for the authorization response in the browser…';
    case 'authorized':
      return `Authorized${e.scope ? ` (scope: ${e.scope})` : ''}`;
    case 'refreshed':
      return 'Access token refreshed';
    case 'step_up':
      return `More permissions needed: requesting ${e.scope ?? 'a new authorization'}`;
    default:
      return undefined;
  }
}

/** What the commands get: the sanitising terminal, never the raw streams. */
interface CliContext {
  term: Terminal;
  env: NodeJS.ProcessEnv;
  open: (url: URL) => Promise<boolean>;
}

function makeClient(opts: GlobalOpts, ctx: CliContext): McpAuthClient {
  const { term, env } = ctx;
  const home = opts.home ?? defaultStoreDir(env);
  const options: McpAuthClientOptions = {
    clientName: 'mcp-auth-kit CLI',
    store: new FileStore(join(home, 'store.json')),
    authorizationTimeoutMs: Number(opts.timeout) * 1000,
    privateNetworks: opts.privateNetworks,
    onEvent: (e) => {
      const text = describeEvent(e);
      if (text) term.err(`${text}\n`);
    },
    openAuthorizationUrl: async (url) => {
      term.err(`Open this URL to authorize:\n\n  ${url.href}\n\n`);
      if (opts.browser && !inCi(env)) {
        const opened = await ctx.open(url);
        if (!opened) term.err('(Could not open a browser; open the URL above yourself.)\n');
      }
    },
  };
  if (opts.clientMetadataUrl) options.clientMetadataUrl = opts.clientMetadataUrl;
  const credentials = clientCredentialOptions(opts, env);
  if (credentials) Object.assign(options, credentials);
  return new McpAuthClient(options);
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
  const secret = opts.clientSecret ?? env.MCP_AUTH_KIT_CLIENT_SECRET;
  if (opts.clientCredentials) {
    if (!opts.clientId || !secret) {
      throw new McpAuthError('MCP_AUTH_INVALID_ARGUMENT', '--client-credentials needs --client-id and a client secret');
    }
    if (!opts.issuer) {
      throw new McpAuthError(
        'MCP_AUTH_INVALID_ARGUMENT',
        '--client-credentials needs --issuer (the secret is sent only to the authorization server that issued it)',
      );
    }
    return { clientCredentials: { client_id: opts.clientId, client_secret: secret, issuer: opts.issuer } };
  }
  if (opts.clientSecret !== undefined && !opts.clientId) {
    throw new McpAuthError('MCP_AUTH_INVALID_ARGUMENT', '--client-secret needs --client-id and --issuer');
  }
  if (!opts.clientId) return undefined;
  if (!opts.issuer)
    throw new McpAuthError('MCP_AUTH_INVALID_ARGUMENT', '--client-id needs --issuer (credentials are bound to one authorization server)');
  return { preRegistered: [{ issuer: opts.issuer, client_id: opts.clientId, ...(secret !== undefined && { client_secret: secret }) }] };
}

async function withMcp<T>(url: string, auth: McpAuthClient, fn: (c: Client) => Promise<T>): Promise<T> {
  const client = new Client({ name: 'mcp-auth-kit', version: '0.1.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { fetch: createAuthFetch(auth) }));
  try {
    return await fn(client);
  } finally {
    await client.close().catch(() => undefined);
  }
}

/** Builds the `mcp-auth-kit` command line program. */
export function createProgram(io: CliIo, setExitCode: (code: number) => void = () => undefined): Command {
  const term = createTerminal(io);
  const ctx: CliContext = { term, env: io.env, open: io.open ?? ((u: URL) => openBrowser(u)) };
  const program = new Command('mcp-auth-kit');
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
      'machine-to-machine: use the client credentials grant with --client-id, --issuer and the secret (no browser)',
    )
    .addOption(new Option('--timeout <seconds>', 'how long to wait for the browser').default('300'))
    .addOption(
      new Option(
        '--private-networks <mode>',
        'addresses the OAuth requests an MCP server names may reach: auto (public; loopback for a local server), block (public only), allow (any, for a trusted intranet)',
      )
        .choices(['auto', 'block', 'allow'])
        .default('auto'),
    )
    .configureOutput({ writeOut: term.out, writeErr: term.err })
    .exitOverride()
    .showHelpAfterError();

  const globals = () => program.opts<GlobalOpts>();

  program
    .command('login')
    .description('authorize against an MCP server and store the tokens')
    .argument('<mcp-url>', 'MCP server URL, e.g. http://localhost:3000/mcp')
    .option('--scope <scope>', "scope to request instead of the server's guidance")
    .action(async (url: string, cmd: { scope?: string }) => {
      const auth = makeClient(globals(), ctx);
      const tokens = await auth.authorize(url, cmd.scope ? { scope: cmd.scope } : {});
      term.out(`Logged in to ${tokens.resource} via ${tokens.issuer}${tokens.scope ? ` (scope: ${tokens.scope})` : ''}\n`);
    });

  program
    .command('status')
    .description('list the servers with stored tokens')
    .option('--json', 'machine-readable output')
    .action(async (cmd: { json?: boolean }) => {
      const rows = await makeClient(globals(), ctx).status();
      if (cmd.json) return term.json(rows);
      if (rows.length === 0) return term.out('Not logged in to any MCP server.\n');
      for (const r of rows) {
        const exp = r.expires_at ? new Date(r.expires_at * 1000).toISOString() : 'no expiry';
        term.out(
          `${r.server}\n  resource: ${r.resource}\n  issuer:   ${r.issuer}\n  status:   ${r.authenticated ? 'logged in' : 'logged out'}` +
            `${r.scope ? `\n  scope:    ${r.scope}` : ''}\n  expires:  ${exp}${r.has_refresh_token ? ' (refreshable)' : ''}\n`,
        );
      }
    });

  program
    .command('logout')
    .description('forget the tokens of one MCP server, or of all')
    .argument('[mcp-url]', 'MCP server URL (default: all)')
    .action(async (url?: string) => {
      await makeClient(globals(), ctx).logout(url);
      term.out(url ? `Logged out of ${url}\n` : 'Logged out of every MCP server\n');
    });

  program
    .command('tools')
    .description('list the tools of an MCP server (logs in when needed)')
    .argument('<mcp-url>')
    .option('--json', 'print the raw tools/list result')
    .action(async (url: string, cmd: { json?: boolean }) => {
      const { tools } = await withMcp(url, makeClient(globals(), ctx), (c) => c.listTools());
      if (cmd.json) return term.json(tools);
      for (const t of tools) term.out(`${t.name}${t.description ? ` — ${t.description}` : ''}\n`);
    });

  program
    .command('call')
    .description('call a tool with JSON arguments (logs in and steps up when needed)')
    .argument('<mcp-url>')
    .argument('<tool>')
    .argument('[json]', 'arguments as a JSON object', '{}')
    .action(async (url: string, tool: string, json: string) => {
      let args: unknown;
      try {
        args = JSON.parse(json);
      } catch {
        throw new McpAuthError('MCP_AUTH_INVALID_ARGUMENT', 'tool arguments must be a JSON object');
      }
      if (!args || typeof args !== 'object' || Array.isArray(args)) {
        throw new McpAuthError('MCP_AUTH_INVALID_ARGUMENT', 'tool arguments must be a JSON object');
      }
      const result = await withMcp(url, makeClient(globals(), ctx), (c) =>
        c.callTool({ name: tool, arguments: args as Record<string, unknown> }),
      );
      term.json(result);
      if ((result as { isError?: boolean }).isError) setExitCode(1);
    });

  return program;
}

/** Runs the CLI; returns the exit code. Errors are printed without stacks or secrets. */
export async function run(argv: string[], io: CliIo): Promise<number> {
  let exitCode = 0;
  const term = createTerminal(io);
  const program = createProgram(io, (c) => (exitCode = c));
  try {
    await program.parseAsync(argv, { from: 'user' });
    return exitCode;
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode;
    if (err instanceof McpAuthError) {
      term.err(`error: ${err.message} [${err.code}${err.error ? `, ${err.error}` : ''}]\n`);
    } else {
      term.err(`error: ${err instanceof Error ? err.message : String(err)}\n`);
    }
    return 1;
  }
}
