/**
 * Two authorization-server *processes* (the runnable app, `apps/auth-server/dist/main.js`,
 * configured only through the runtime-contract environment) on different loopback ports,
 * sharing one PostgreSQL schema and one issuer: nothing is shared but the database.
 * Needs the app built (`npm test` builds first; alone: `npx tsc -b apps/auth-server`).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerClient, RESOURCE } from '../helpers/as.js';
import { authorizeAuto, exchangeCode, refreshWith } from '../helpers/flow.js';
import { getJwks, vacantLoopbackUrl, verifyAccessToken } from './as-harness.js';
import { dropSchema, randomSchema, TEST_DATABASE_URL } from './pg-helpers.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');
const MAIN = join(root, 'apps/auth-server/dist/main.js');

interface Proc {
  url: string;
  child: ChildProcess;
  exited: Promise<void>;
  output(): string;
}

function startProcess(env: Record<string, string>): Promise<Proc> {
  const child = spawn(process.execPath, [MAIN], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let started = false;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => reject(new Error(`auth-server did not start:\n${out}`)), 20_000);
    void exited.then(() => {
      clearTimeout(timer);
      if (!started) reject(new Error(`auth-server exited early:\n${out}`));
    });
    const collect = (chunk: Buffer) => {
      out += chunk.toString();
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m && !started) {
        started = true;
        clearTimeout(timer);
        resolvePromise({ url: m[1]!, child, exited, output: () => out });
      }
    };
    child.stdout!.on('data', collect);
    child.stderr!.on('data', collect);
  });
}

async function stop(proc: Proc | undefined): Promise<void> {
  if (!proc) return;
  proc.child.kill('SIGTERM');
  await proc.exited;
}

describe('two auth-server processes sharing one PostgreSQL schema', () => {
  const schema = randomSchema('storage_procs');
  const dataDir = mkdtempSync(join(tmpdir(), 'mcp-auth-kit-procs-'));
  let a: Proc | undefined;
  let b: Proc | undefined;
  let issuer: string;

  beforeAll(async () => {
    expect(existsSync(MAIN), `${MAIN} missing: build apps/auth-server first`).toBe(true);
    issuer = await vacantLoopbackUrl();
    const env = {
      AS_PORT: '0',
      AS_ISSUER: issuer,
      MCP_RESOURCE: RESOURCE,
      DATABASE_URL: TEST_DATABASE_URL,
      DATABASE_SCHEMA: schema,
      DATA_DIR: dataDir,
      DEV_AUTO_LOGIN: 'alice',
    };
    a = await startProcess(env);
    b = await startProcess(env);
  });
  afterAll(async () => {
    await Promise.all([stop(a), stop(b)]);
    rmSync(dataDir, { recursive: true, force: true });
    await dropSchema(schema);
  });

  it('authorize on A, redeem on B, refresh on A, revoke on B; identical JWKS', async () => {
    expect(a!.url).not.toBe(b!.url);
    const [ja, jb] = await Promise.all([getJwks(a!.url), getJwks(b!.url)]);
    expect(jb).toEqual(ja);

    const reg = await registerClient(b!.url);
    expect(reg.status).toBe(201);
    const clientId = reg.body.client_id as string;

    const flow = await authorizeAuto(a!.url, clientId);
    expect(flow.callback.searchParams.get('iss')).toBe(issuer);
    const token = await exchangeCode(b!.url, clientId, flow);
    expect(token.status, JSON.stringify(token.body)).toBe(200);
    expect((await verifyAccessToken(token.body.access_token, ja, issuer)).client_id).toBe(clientId);

    const refreshed = await refreshWith(a!.url, clientId, token.body.refresh_token);
    expect(refreshed.status, JSON.stringify(refreshed.body)).toBe(200);
    await verifyAccessToken(refreshed.body.access_token, jb, issuer);

    const revoke = await fetch(`${b!.url}/token/revocation`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: refreshed.body.refresh_token, client_id: clientId }),
    });
    expect(revoke.status).toBe(200);
    const afterRevoke = await refreshWith(a!.url, clientId, refreshed.body.refresh_token);
    expect(afterRevoke.body.error).toBe('invalid_grant');
  });
});
