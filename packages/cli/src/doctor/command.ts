/**
 * `mcp-auth-kit doctor <mcp-url>`: the testing kit's checkDeployment from the command line, its
 * report for people (grouped, coloured on a terminal) or as JSON, and an exit code by severity.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { createTerminal, ownLayout, terminalText, type Terminal } from '@mcp-auth-kit/protocol';
import type { StoredTokens } from '@mcp-auth-kit/client';
import { checkDeployment, type CheckDeploymentOptions } from '@mcp-auth-kit/client/doctor';
import { writeReport } from './report-view.js';

/** 0: pass or warnings only; 1: a check failed; 2: usage (bad arguments). */
export const DOCTOR_EXIT = { ok: 0, failed: 1, usage: 2 } as const;

export interface DoctorDeps {
  raw: { stdout: (text: string) => void; stderr: (text: string) => void; colour?: boolean };
  env: NodeJS.ProcessEnv;
  setExitCode: (code: number) => void;
  /** The CLI's own login into a store at `home` (interactive, or client credentials with the global options). */
  login: (url: string, home: string, allowPrivate: boolean) => Promise<StoredTokens>;
  /** The global `--client-id`, for a refresh token given on the command line. */
  clientId: () => string | undefined;
  /** The global `--issuer`: the only AS a refresh token given on the command line is sent to. */
  issuer: () => string | undefined;
}

interface DoctorOpts {
  json?: boolean;
  verbose?: boolean;
  token?: string;
  otherResourceToken?: string;
  refreshToken?: string;
  scopeProbeTool?: string;
  browserOrigin?: string;
  allowPrivate?: boolean;
  login?: boolean;
  maxRequests: string;
  color: 'auto' | 'always' | 'never';
}

function positive(value: string): string {
  if (!/^[1-9]\d{0,3}$/.test(value)) throw new InvalidArgumentError('a whole number from 1 to 9999');
  return value;
}

/** A commander argument parser: an http(s) URL, as `pick` gives it, else a usage error saying what is expected. */
function httpUrl(pick: (url: URL) => string, expected: string): (value: string) => string {
  return (value) => {
    try {
      const url = new URL(value);
      if (url.protocol === 'http:' || url.protocol === 'https:') return pick(url);
    } catch {
      // falls through to the usage error
    }
    throw new InvalidArgumentError(expected);
  };
}

const origin = httpUrl((url) => url.origin, 'an http(s) origin, e.g. https://app.example.com');
const serverUrl = httpUrl((url) => url.href, 'the MCP endpoint URL, e.g. https://mcp.example.com/mcp');

/** NO_COLOR (no-color.org) wins; FORCE_COLOR or a terminal turns colour on. */
function wantsColour(when: DoctorOpts['color'], deps: DoctorDeps): boolean {
  if (when !== 'auto') return when === 'always';
  if (deps.env.NO_COLOR) return false;
  return Boolean((deps.env.FORCE_COLOR && deps.env.FORCE_COLOR !== '0') || deps.raw.colour);
}

/** Adds the `doctor` command to `program`. */
export function registerDoctor(program: Command, deps: DoctorDeps): void {
  program
    .command('doctor')
    .description("check an MCP server's authorization from outside, as a client meets it, with the fix for each finding")
    .argument('<mcp-url>', 'the MCP endpoint URL, e.g. https://mcp.example.com/mcp', serverUrl)
    .option('--json', 'print the findings as JSON (for CI)')
    .option('--verbose', 'show what was sent and received for every finding, not only for warnings and failures')
    .option(
      '--token <token>',
      'an access token for the server: enables audience, query-string and scope checks (or $MCP_AUTH_KIT_DOCTOR_TOKEN)',
    )
    .option('--login', 'log in first with this CLI (browser, or --client-credentials with --client-id/--issuer) into a throwaway store')
    .option('--other-resource-token <token>', 'a token the same AS issued for another resource: the server must refuse it')
    .option(
      '--refresh-token <token>',
      'a refresh token of the client given by --client-id, issued by --issuer (sent only there): checks rotation and a retried refresh',
    )
    .option('--scope-probe-tool <name>', "a tool the token's scope does not cover: expects 403 insufficient_scope with scope")
    .option('--browser-origin <origin>', 'an origin your browser clients use: checks its CORS preflight', origin)
    .option('--allow-private', 'allow loopback and private addresses, and plain http to them (local or intranet deployments)')
    .addOption(new Option('--max-requests <n>', 'at most this many HTTP requests').default('40').argParser(positive))
    .addOption(new Option('--color <when>', 'colour the report').choices(['auto', 'always', 'never']).default('auto'))
    .addHelpText('after', '\nExit code: 0 all passed (or warnings only), 1 a check failed, 2 usage error.\n')
    .exitOverride((err) => {
      throw err.exitCode === 0 ? err : new CommanderError(DOCTOR_EXIT.usage, err.code, err.message);
    })
    .action(async (url: string, opts: DoctorOpts) => {
      const term = createTerminal(deps.raw, { colour: !opts.json && wantsColour(opts.color, deps) });
      const options = await doctorOptions(url, opts, deps, term);
      try {
        const report = await checkDeployment(url, options.check);
        if (opts.json) term.json(report);
        else writeReport(term, report, opts.verbose);
        deps.setExitCode(report.status === 'fail' ? DOCTOR_EXIT.failed : DOCTOR_EXIT.ok);
      } finally {
        options.cleanup();
      }
    });
}

async function doctorOptions(
  url: string,
  opts: DoctorOpts,
  deps: DoctorDeps,
  term: Terminal,
): Promise<{ check: CheckDeploymentOptions; cleanup: () => void }> {
  const check: CheckDeploymentOptions = { allowPrivate: opts.allowPrivate === true, maxRequests: Number(opts.maxRequests) };
  const token = opts.token ?? deps.env.MCP_AUTH_KIT_DOCTOR_TOKEN;
  if (token) check.token = token;
  if (opts.otherResourceToken) check.otherResourceToken = opts.otherResourceToken;
  if (opts.browserOrigin) check.browserOrigin = opts.browserOrigin;
  if (opts.scopeProbeTool) check.scopeProbe = { method: 'tools/call', params: { name: opts.scopeProbeTool, arguments: {} } };
  if (opts.refreshToken) {
    const clientId = deps.clientId();
    const issuer = deps.issuer();
    if (!clientId || !issuer) {
      const message =
        'error: --refresh-token needs --client-id and --issuer (the client and the authorization server it was issued by; it is sent nowhere else)';
      term.err(ownLayout(`${message}\n`));
      throw new CommanderError(DOCTOR_EXIT.usage, 'doctor.refresh', message);
    }
    check.refresh = { refreshToken: opts.refreshToken, clientId, issuer };
  }
  if (!opts.login) return { check, cleanup: () => undefined };
  // a store of its own: the refresh checks rotate (and may revoke) what it holds, never the user's tokens
  const home = mkdtempSync(join(tmpdir(), 'mcp-auth-kit-doctor-'));
  const cleanup = () => rmSync(home, { recursive: true, force: true });
  try {
    const tokens = await deps.login(url, home, check.allowPrivate === true);
    term.err(terminalText`Logged in via ${tokens.issuer} for the checks (a throwaway store, deleted afterwards)\n`);
    check.token = tokens.access_token;
    if (tokens.refresh_token) check.refresh = { refreshToken: tokens.refresh_token, clientId: tokens.client_id, issuer: tokens.issuer };
  } catch (err) {
    cleanup();
    throw err;
  }
  return { check, cleanup };
}
