#!/usr/bin/env node
// One-command start of the demo stack (runtime contract: `npm start`): the authorization server,
// the demo MCP server and the demo drive (a third-party OAuth service, issue 41) as child
// processes, output prefixed, all awaited until they answer, all stopped on Ctrl-C / SIGTERM.
// If one child dies, the others are stopped and we exit non-zero.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { PORT_DEFAULTS, portProblems } from './port-check.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
// Under `npm start`, `node` on the script PATH may be a different binary than the one running npm
// (a dependency's bin can put a `node` into node_modules/.bin), and native modules
// (better-sqlite3) are built for the Node that ran the install: run the children with npm's Node.
const nodeBinary =
  process.env.npm_node_execpath && existsSync(process.env.npm_node_execpath) ? process.env.npm_node_execpath : process.execPath;
function milliseconds(value, fallback) {
  const parsed = Number(value);
  return value !== undefined && value !== '' && Number.isFinite(parsed) && parsed > 0 ? parsed : fallback;
}
const READY_TIMEOUT_MS = milliseconds(process.env.START_READY_TIMEOUT_MS, 60_000);
const STOP_TIMEOUT_MS = milliseconds(process.env.START_STOP_TIMEOUT_MS, 10_000);

function log(message) {
  process.stdout.write(`[start] ${message}\n`);
}

function fail(message) {
  process.stderr.write(`[start] ${message}\n`);
  process.exit(1);
}

/** The runtime contract's defaults, filled in where the environment leaves them unset. */
function resolveEnvironment(env) {
  const asPort = env.AS_PORT || PORT_DEFAULTS.AS_PORT;
  const mcpPort = env.MCP_PORT || PORT_DEFAULTS.MCP_PORT;
  const drivePort = env.DEMO_DRIVE_PORT || PORT_DEFAULTS.DEMO_DRIVE_PORT;
  for (const [name, value] of [
    ['AS_PORT', asPort],
    ['MCP_PORT', mcpPort],
    ['DEMO_DRIVE_PORT', drivePort],
  ]) {
    if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 65535) fail(`${name} must be a port number (1-65535)`);
  }
  const resolved = {
    ...env,
    AS_PORT: asPort,
    MCP_PORT: mcpPort,
    DEMO_DRIVE_PORT: drivePort,
    // Our AS's client secret at the demo drive: new for every start (the drive keeps nothing).
    DEMO_DRIVE_CLIENT_SECRET: randomBytes(24).toString('base64url'),
    AS_ISSUER: env.AS_ISSUER || `http://localhost:${asPort}`,
    MCP_RESOURCE: env.MCP_RESOURCE || `http://localhost:${mcpPort}/mcp`,
    DATA_DIR: resolve(process.cwd(), env.DATA_DIR || '.data'),
  };
  for (const name of ['AS_ISSUER', 'MCP_RESOURCE']) {
    try {
      new URL(resolved[name]);
    } catch {
      fail(`${name} must be an absolute URL`);
    }
  }
  return resolved;
}

const env = resolveEnvironment(process.env);

const children = [
  { name: 'auth', label: 'authorization server', entry: resolve(root, 'apps/auth-server/dist/main.js') },
  { name: 'mcp', label: 'demo MCP server', entry: resolve(root, 'apps/demo-mcp-server/dist/main.js') },
];
for (const child of children) {
  if (!existsSync(child.entry)) fail(`${child.entry} is missing: run \`npm run build\` first (npm start does).`);
}
for (const built of ['packages/protocol/dist/index.js', 'packages/testing/dist/index.js']) {
  if (!existsSync(resolve(root, built))) fail(`${resolve(root, built)} is missing: run \`npm run build\` first (npm start does).`);
}
// The demo drive's account has a public password and its redirect URI is the AS's connect
// callback: it belongs to a development stack on this machine, so it starts only for a loopback
// issuer outside production mode.
const { isLoopbackHost } = await import('@mcp-auth-kit/protocol');
const withDrive = isLoopbackHost(new URL(env.AS_ISSUER).hostname) && env.NODE_ENV !== 'production';
if (withDrive) {
  children.push({ name: 'drive', label: 'demo drive', entry: resolve(root, 'scripts/demo-drive.mjs') });
  configureDemoDrive(env);
} else {
  log('the demo drive is not started (it needs a loopback AS_ISSUER, outside NODE_ENV=production)');
}

/**
 * The drive as a provider of the AS's token vault, and the demo MCP server as the confidential
 * client that exchanges its MCP tokens for drive tokens (issue 41): a providers file in DATA_DIR
 * (it holds the drive's client secret: owner-only) and the MCP server's credentials, both new at
 * every start. A THIRD_PARTY_PROVIDERS_FILE or MCP_CLIENT_ID the user set is kept as given.
 */
function configureDemoDrive(env) {
  const driveIssuer = `http://localhost:${env.DEMO_DRIVE_PORT}`;
  env.DEMO_DRIVE_API = `${driveIssuer}/api`;
  if (!env.MCP_CLIENT_ID) {
    env.MCP_CLIENT_ID = 'demo-mcp-server';
    env.MCP_CLIENT_SECRET = randomBytes(24).toString('base64url');
  }
  if (!env.THIRD_PARTY_PROVIDERS_FILE) {
    const file = resolve(env.DATA_DIR, 'demo-drive-provider.json');
    mkdirSync(env.DATA_DIR, { recursive: true });
    const provider = {
      issuer: driveIssuer,
      clientId: 'mcp-auth-kit-demo',
      clientSecret: env.DEMO_DRIVE_CLIENT_SECRET,
      scopes: ['files.read'],
      resources: [env.MCP_RESOURCE],
      displayName: 'Demo Drive',
    };
    writeFileSync(file, `${JSON.stringify({ drive: provider }, null, 2)}\n`, { mode: 0o600 });
    chmodSync(file, 0o600);
    env.THIRD_PARTY_PROVIDERS_FILE = file;
  }
}

// Before anything starts: a taken port is named (and what holds it), never a "ready" that
// the readiness probe got from somebody else's server.
const problems = await portProblems(env, process.env, { withDrive });
if (problems.length) {
  for (const line of problems.flat()) process.stderr.write(`[start] ${line}\n`);
  fail('nothing was started');
}

/** Copies a child's stream line by line with a `[name]` prefix. */
function pipeWithPrefix(stream, target, prefix) {
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  lines.on('line', (line) => target.write(`${prefix} ${line}\n`));
}

let stopping = false;
let forced = false;

for (const child of children) {
  const proc = spawn(nodeBinary, [child.entry], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  child.proc = proc;
  if (proc.pid !== undefined) log(`started the ${child.label} (pid ${proc.pid})`);
  child.exited = new Promise((resolveExit) => {
    proc.on('close', (code, signal) => {
      child.exit = { code, signal };
      resolveExit();
    });
  });
  proc.on('error', (error) => {
    process.stderr.write(`[start] could not start the ${child.label}: ${error.message}\n`);
  });
  pipeWithPrefix(proc.stdout, process.stdout, `[${child.name}]`);
  pipeWithPrefix(proc.stderr, process.stderr, `[${child.name}]`);
  void child.exited.then(() => {
    if (stopping) return;
    // Ctrl-C in a terminal signals the whole process group: a child may exit before our own
    // SIGINT handler ran. Give that signal a moment to arrive before calling this a crash.
    setTimeout(() => {
      if (stopping) return;
      const { code, signal } = child.exit;
      process.stderr.write(`[start] the ${child.label} exited unexpectedly (${signal ?? `code ${code}`}); stopping\n`);
      void stop(typeof code === 'number' && code !== 0 ? code : 1);
    }, 250);
  });
}

function isRunning(child) {
  return child.exit === undefined && child.proc.exitCode === null && child.proc.signalCode === null;
}

/** Stops every running child (SIGTERM, then SIGKILL after a grace period) and exits. */
async function stop(exitCode) {
  if (stopping) return;
  stopping = true;
  for (const child of children) if (isRunning(child)) child.proc.kill('SIGTERM');
  const timer = setTimeout(() => {
    for (const child of children) {
      if (isRunning(child)) {
        forced = true;
        process.stderr.write(`[start] the ${child.label} did not stop in time; killing it\n`);
        child.proc.kill('SIGKILL');
      }
    }
  }, STOP_TIMEOUT_MS);
  await Promise.all(children.map((child) => child.exited));
  clearTimeout(timer);
  const code = exitCode === 0 && forced ? 1 : exitCode;
  if (code === 0) log('stopped');
  process.exit(code);
}

function onSignal(signal) {
  if (stopping) {
    // A second Ctrl-C: do not wait for a graceful shutdown any longer.
    for (const child of children) if (isRunning(child)) child.proc.kill('SIGKILL');
    return;
  }
  log(`${signal} received; stopping the servers`);
  void stop(0);
}
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);

// Under `npm start` we run below `npm` and a `sh -c`; a signal sent to npm alone may kill that
// shell without reaching us. Once orphaned, nobody can stop us any more: stop on our own. (Not
// when started directly, so `nohup node scripts/start.mjs &` keeps running.)
if (process.env.npm_lifecycle_event) {
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent && !stopping) {
      log('the parent process is gone; stopping the servers');
      void stop(0);
    }
  }, 1_000).unref();
}

/** RFC 8414 §3.1 / OIDC Discovery well-known URLs of an issuer, served on the local AS port. */
function asMetadataUrls(issuer, port) {
  const path = new URL(issuer).pathname.replace(/\/$/, '');
  const local = `http://localhost:${port}`;
  return [
    `${local}/.well-known/oauth-authorization-server${path}`,
    `${local}/.well-known/openid-configuration${path}`,
    `${local}${path}/.well-known/openid-configuration`,
  ];
}

/** RFC 9728 §3.1 well-known URL of the resource's metadata, served on the local MCP port. */
function prmUrl(resource, port) {
  const path = new URL(resource).pathname.replace(/\/$/, '');
  return `http://localhost:${port}/.well-known/oauth-protected-resource${path}`;
}

async function answers(url) {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
    if (!res.ok) return undefined;
    return await res.json();
  } catch {
    return undefined;
  }
}

async function waitFor(description, check) {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (!stopping) {
    const result = await check();
    if (result !== undefined) return result;
    if (Date.now() > deadline) {
      process.stderr.write(`[start] the ${description} did not answer within ${READY_TIMEOUT_MS} ms; stopping\n`);
      await stop(1);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return undefined;
}

/** The demo drive's RFC 8414 metadata, on its local port (issuer http://localhost:<port>). */
const driveMetadataUrl = `http://localhost:${env.DEMO_DRIVE_PORT}/.well-known/oauth-authorization-server`;

const [asMetadata, prm, drive] = await Promise.all([
  waitFor('authorization server', async () => {
    for (const url of asMetadataUrls(env.AS_ISSUER, env.AS_PORT)) {
      const metadata = await answers(url);
      if (metadata && typeof metadata.issuer === 'string') return metadata;
    }
    return undefined;
  }),
  waitFor('demo MCP server', async () => {
    const metadata = await answers(prmUrl(env.MCP_RESOURCE, env.MCP_PORT));
    return metadata && typeof metadata.resource === 'string' ? metadata : undefined;
  }),
  withDrive
    ? waitFor('demo drive', async () => {
        const metadata = await answers(driveMetadataUrl);
        return metadata && typeof metadata.issuer === 'string' ? metadata : undefined;
      })
    : null,
]);

// A child that died meanwhile (its exit is reported 250 ms later) makes this no success.
if (!stopping && asMetadata && prm && drive !== undefined && children.every(isRunning)) {
  if (asMetadata.issuer !== env.AS_ISSUER) {
    process.stderr.write(`[start] warning: the AS reports issuer ${asMetadata.issuer}, expected ${env.AS_ISSUER}\n`);
  }
  log('ready');
  log(`  authorization server  ${asMetadata.issuer}`);
  log(`  demo MCP server       ${prm.resource}`);
  if (drive) log(`  demo drive            ${drive.issuer}`);
  log('press Ctrl-C to stop');
}
