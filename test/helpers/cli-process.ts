import { spawn } from 'node:child_process';
import { cliPath } from './cli.js';

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `mcp-auth-kit <args>` as a process and collects its output. `onStderr` sees stderr as it
 * grows (e.g. to answer the authorization URL); the process is killed after `timeoutMs`.
 */
export function runCli(
  args: string[],
  env: NodeJS.ProcessEnv,
  options: { timeoutMs?: number; onStderr?: (stderr: string) => void } = {},
): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cliPath, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill(), options.timeoutMs ?? 20_000);
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
      options.onStderr?.(stderr);
    });
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
