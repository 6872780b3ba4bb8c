/**
 * Runs the official conformance CLI (`conformance authorization`, Node 22 binary) against an
 * issuer and plays the browser: when the CLI prints the authorization URL, it is followed with
 * a cookie jar (DEV_AUTO_LOGIN on the AS) until the CLI's own callback server receives the code.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HeadlessBrowser } from '@mcp-auth-kit/test-utils';

const root = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../..');
const CLI = join(root, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');

export interface Check {
  id: string;
  status: string;
  errorMessage?: string;
}

export interface CliResult {
  exitCode: number | null;
  stdout: string;
  checks: Check[];
  browserTrace: string[];
}

/** Follows redirects like a browser would, cookies kept, until a non-redirect (the CLI's callback answers). */
async function browse(start: string, trace: string[]): Promise<void> {
  const browser = new HeadlessBrowser();
  try {
    await browser.follow(start, () => false, {}, 12);
  } finally {
    trace.push(...browser.history.map((hop) => `${hop.status} ${new URL(hop.url).pathname}`));
  }
}

export async function runAuthorizationConformance(args: {
  /** A Node 22+ binary (test/helpers/node22.ts): the CLI needs one. */
  node: string;
  issuer: string;
  clientId: string;
  callbackPort: number;
  resource?: string;
}): Promise<CliResult> {
  const outDir = mkdtempSync(join(tmpdir(), 'as-conformance-'));
  const cliArgs = [
    CLI,
    'authorization',
    '--url',
    args.issuer,
    '--client-id',
    args.clientId,
    '--port',
    String(args.callbackPort),
    '-o',
    outDir,
  ];
  if (args.resource) cliArgs.push('--resource', args.resource);
  const child = spawn(args.node, cliArgs, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
  let stdout = '';
  const browserTrace: string[] = [];
  let browsing: Promise<void> | undefined;
  const authPrefix = `${args.issuer}/auth?`;
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d: string) => (stdout += d));
  child.stdout.on('data', (d: string) => {
    stdout += d;
    if (!browsing && stdout.includes('Callback server started')) {
      const line = stdout.split('\n').find((l) => l.startsWith(authPrefix));
      if (line) browsing = browse(line.trim(), browserTrace).catch((e: Error) => void browserTrace.push(`error ${e.message}`));
    }
  });
  const timer = setTimeout(() => child.kill('SIGTERM'), 45_000);
  const exitCode = await new Promise<number | null>((r) => child.on('close', (code) => r(code)));
  clearTimeout(timer);
  await browsing;

  const checks: Check[] = [];
  for (const dir of readdirSync(outDir)) {
    for (const file of readdirSync(join(outDir, dir))) {
      if (file === 'checks.json') checks.push(...(JSON.parse(readFileSync(join(outDir, dir, file), 'utf8')) as Check[]));
    }
  }
  rmSync(outDir, { recursive: true, force: true });
  return { exitCode, stdout, checks, browserTrace };
}
