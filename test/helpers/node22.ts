/**
 * A Node.js >= 22 binary for the tools that need one (the official conformance CLI), found or
 * fetched when a test asks for it — never a dependency of the workspace: a platform-specific
 * Node package in `devDependencies` makes `npm ci` fail on every other platform, and its `bin`
 * would put its `node` first on PATH for `npx`.
 *
 * Order: the Node running the tests when it is 22 or later; `MCP_AUTH_KIT_NODE22` (a path, set
 * by `.ci/run`); a copy cached under `node_modules/.cache/`; otherwise the npm registry's Node
 * binary package for this platform (`node-<platform>-<arch>@22`), installed once into that cache.
 * When none works, the caller gets the reason to print and skips (or fails in CI).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const MIN_MAJOR = 22;

export type Node22 = { path: string; version: string } | { path: undefined; reason: string };

const major = (version: string) => Number(/^v?(\d+)\./.exec(version)?.[1] ?? 0);

async function versionOf(node: string): Promise<string | undefined> {
  try {
    const { stdout } = await run(node, ['--version'], { timeout: 30_000 });
    return stdout.trim();
  } catch {
    return undefined;
  }
}

function binaryIn(prefix: string, pkg: string): string | undefined {
  const manifest = join(prefix, 'node_modules', pkg, 'package.json');
  if (!existsSync(manifest)) return undefined;
  const bin = (JSON.parse(readFileSync(manifest, 'utf8')) as { bin?: { node?: string } }).bin?.node;
  const path = bin && join(prefix, 'node_modules', pkg, bin);
  return path && existsSync(path) ? path : undefined;
}

/** npm as the test runner's npm (npm sets npm_execpath), else the one on PATH. */
function npmCommand(args: string[]): [string, string[]] {
  const cli = process.env.npm_execpath;
  if (cli && /npm-cli\.js$/.test(cli)) return [process.execPath, [cli, ...args]];
  return [process.platform === 'win32' ? 'npm.cmd' : 'npm', args];
}

async function install(pkg: string, cacheDir: string): Promise<string> {
  mkdirSync(dirname(cacheDir), { recursive: true });
  // Install beside the cache and rename: parallel test files race safely (one rename wins).
  const staging = mkdtempSync(`${cacheDir}.tmp-`);
  try {
    const [cmd, args] = npmCommand([
      'install',
      '--no-save',
      '--no-package-lock',
      '--no-audit',
      '--no-fund',
      '--prefer-offline',
      '--loglevel=error',
      '--prefix',
      staging,
      `${pkg}@${MIN_MAJOR}`,
    ]);
    await run(cmd, args, { cwd: staging, timeout: 300_000, maxBuffer: 8 * 1024 * 1024 });
    if (!binaryIn(staging, pkg)) throw new Error(`${pkg} installed without a node binary`);
    try {
      renameSync(staging, cacheDir);
    } catch (error) {
      if (!binaryIn(cacheDir, pkg)) throw error;
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return binaryIn(cacheDir, pkg)!;
}

let found: Promise<Node22> | undefined;

async function find(): Promise<Node22> {
  if (major(process.version) >= MIN_MAJOR) return { path: process.execPath, version: process.version };

  const fromEnv = process.env.MCP_AUTH_KIT_NODE22;
  if (fromEnv) {
    const version = await versionOf(fromEnv);
    if (version && major(version) >= MIN_MAJOR) return { path: fromEnv, version };
    return {
      path: undefined,
      reason: `MCP_AUTH_KIT_NODE22=${fromEnv} is not a Node.js ${MIN_MAJOR}+ binary (${version ?? 'does not run'})`,
    };
  }

  const pkg = `node-${process.platform === 'win32' ? 'win' : process.platform}-${process.arch}`;
  const cacheDir = join(root, 'node_modules', '.cache', 'mcp-auth-kit', `${pkg}-${MIN_MAJOR}`);
  let path = binaryIn(cacheDir, pkg);
  if (!path) {
    try {
      path = await install(pkg, cacheDir);
    } catch (error) {
      const detail = String((error as { stderr?: string }).stderr || (error as Error).message)
        .trim()
        .split('\n')
        .slice(0, 3)
        .join(' / ');
      return {
        path: undefined,
        reason: `this test runs on Node ${process.version} and needs a Node.js ${MIN_MAJOR}+ binary: installing ${pkg}@${MIN_MAJOR} from the npm registry failed (${detail}). Run the tests on Node ${MIN_MAJOR}+, or set MCP_AUTH_KIT_NODE22 to a Node ${MIN_MAJOR}+ binary.`,
      };
    }
  }
  const version = await versionOf(path);
  if (version && major(version) >= MIN_MAJOR) return { path, version };
  return { path: undefined, reason: `${path} does not run on this machine (${version ?? 'no version'})` };
}

/** A Node >= 22 binary, looked up (and installed if needed) once per test process. */
export function node22(): Promise<Node22> {
  found ??= find();
  return found;
}

/**
 * For a test that cannot run without Node 22: logs why it is skipped, or throws in CI
 * (`CI=true`), where the binary must be there and a skip would hide lost coverage.
 */
export function unavailableNode22(what: string, node: Node22): boolean {
  if (!('reason' in node)) return false;
  const message = `${what} cannot run: ${node.reason}`;
  if (process.env.CI === 'true' || process.env.CI === '1') throw new Error(message);
  console.warn(`SKIPPED — ${message}`);
  return true;
}
