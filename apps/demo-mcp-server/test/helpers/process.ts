import { spawn, type ChildProcess } from 'node:child_process';

/** A child process with its output collected, for tests of runnable entry points. */
export interface RunningProcess {
  child: ChildProcess;
  output(): string;
  /** Resolves when the combined output matches, rejects on exit or timeout. */
  waitForOutput(pattern: RegExp, timeoutMs?: number): Promise<void>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Environment without the runtime contract's variables, so a test sets exactly what it means. */
export function cleanEnv(overrides: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of [
    'AS_PORT',
    'AS_ISSUER',
    'MCP_PORT',
    'MCP_RESOURCE',
    'DEMO_DRIVE_PORT',
    'MCP_HOST',
    'MCP_ALLOWED_ORIGINS',
    'DATA_DIR',
    'DATABASE_URL',
    'DEV_AUTO_LOGIN',
    'CIMD_ALLOW_PRIVATE_NETWORK',
  ]) {
    delete env[name];
  }
  return { ...env, ...overrides };
}

/** `detached` puts the child in its own process group, so a test can signal the group like a terminal's Ctrl-C. */
export function run(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  cwd?: string,
  options: { detached?: boolean } = {},
): RunningProcess {
  const child = spawn(command, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'], detached: options.detached ?? false });
  let output = '';
  const waiters = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    output += chunk.toString('utf8');
    for (const waiter of waiters) waiter();
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('close', (code, signal) => resolve({ code, signal }));
  });
  return {
    child,
    output: () => output,
    exited,
    waitForOutput(pattern, timeoutMs = 60_000) {
      return new Promise<void>((resolve, reject) => {
        const check = () => {
          if (pattern.test(output)) {
            cleanup();
            resolve();
          }
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`timed out waiting for ${pattern}; output so far:\n${output}`));
        }, timeoutMs);
        const onExit = () => {
          cleanup();
          reject(new Error(`process exited before ${pattern}; output:\n${output}`));
        };
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
          child.off('close', onExit);
        };
        waiters.add(check);
        child.once('close', onExit);
        check();
      });
    },
  };
}
