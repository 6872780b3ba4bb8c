import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { HeadlessBrowser } from '@mcp-auth-kit/test-utils';
import { isLoopbackCallback } from './loopback.js';
import { sharedForSuite } from './suite.js';

/** The `mcp-auth-kit` command as npm links it (the checked-in bin shim). */
export const cliPath = join(dirname(createRequire(import.meta.url).resolve('@mcp-auth-kit/cli/package.json')), 'bin/mcp-auth-kit.js');

/**
 * `mcp-auth-kit --no-browser login <mcpUrl>`: reads the authorization URL the CLI prints, plays
 * the browser headlessly up to the CLI's loopback callback, and waits for the CLI to exit.
 * `beforeBrowser` runs once the URL is printed, before the browser is played (attack tests).
 * `bin`: another installed copy of the command (the scratch project's, from the tarball);
 * `loginArgs`: options of `login` (e.g. `--scope`).
 */
export async function cliLogin(
  mcpUrl: string,
  env: NodeJS.ProcessEnv,
  beforeBrowser?: (authorizationUrl: URL) => Promise<void>,
  bin = cliPath,
  loginArgs: string[] = [],
) {
  const login = spawn(process.execPath, [bin, '--no-browser', 'login', ...loginArgs, mcpUrl], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  let stdout = '';
  login.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => login.on('exit', resolve));
  const authorizationUrl = await new Promise<URL>((resolve, reject) => {
    login.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      const match = /(http:\/\/localhost:\d+\/\S*auth\S*)/.exec(stderr);
      if (match) resolve(new URL(match[1]!));
    });
    login.on('exit', (code) => reject(new Error(`login exited (${code}) before printing a URL: ${stderr}`)));
  });
  await beforeBrowser?.(authorizationUrl);
  const callback = await new HeadlessBrowser().followToCallback(authorizationUrl, isLoopbackCallback, { deliver: true });
  const exitCode = await exited;
  return { authorizationUrl, callback, exitCode, stderr, stdout };
}

/** A CLI home of a describe block: a fresh `MCP_AUTH_KIT_HOME` and the CLI's environment. */
export interface CliHome {
  home: string;
  /** CI set: the CLI prints the authorization URL instead of opening a browser. */
  env: NodeJS.ProcessEnv;
  close(): Promise<void>;
}

/** A fresh CLI home (`prefix` names its temporary folder) made before a describe block's tests, removed after them. */
export function useCliHome(prefix: string): CliHome {
  return sharedForSuite(async () => {
    const home = await mkdtemp(join(tmpdir(), prefix));
    return {
      home,
      env: { ...process.env, MCP_AUTH_KIT_HOME: home, CI: 'true' },
      close: () => rm(home, { recursive: true, force: true }),
    };
  });
}
