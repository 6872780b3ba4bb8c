import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type RequestListener } from 'node:http';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, isListening } from '@mcp-auth-kit/test-utils';
import { cleanEnv, run } from './helpers/process.js';

// `npm start` = build, then scripts/start.mjs. This runs the script itself on free ports with a
// temporary DATA_DIR; it needs both apps built (`npm test` builds first).
const root = fileURLToPath(new URL('../../../', import.meta.url));
const script = join(root, 'scripts/start.mjs');
const authMain = join(root, 'apps/auth-server/dist/main.js');
const mcpMain = join(root, 'apps/demo-mcp-server/dist/main.js');
const missing = [authMain, mcpMain].filter((file) => !existsSync(file));
const skipReason = missing.length > 0 ? ` (skipped: ${missing.map((f) => f.slice(root.length)).join(', ')} not built)` : '';

const dataDirs: string[] = [];
afterAll(() => {
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});

function tempDataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-auth-kit-start-'));
  dataDirs.push(dir);
  return dir;
}

/** The three ports of one stack: authorization server, demo MCP server, demo drive. */
async function freeStackPorts(): Promise<{ asPort: number; mcpPort: number; drivePort: number }> {
  return { asPort: await freePort(), mcpPort: await freePort(), drivePort: await freePort() };
}

/** The environment of a stack on these ports with a fresh DATA_DIR. */
function stackEnv(ports: { asPort: number; mcpPort: number; drivePort: number }, extra: Record<string, string> = {}) {
  return cleanEnv({
    AS_PORT: String(ports.asPort),
    MCP_PORT: String(ports.mcpPort),
    DEMO_DRIVE_PORT: String(ports.drivePort),
    DATA_DIR: tempDataDir(),
    ...extra,
  });
}

/** Nothing listens on these ports any more. */
async function expectClosed(...ports: number[]): Promise<void> {
  for (const port of ports) expect(await isListening(port), `port ${port}`).toBe(false);
}

describe.skipIf(missing.length > 0)(`scripts/start.mjs${skipReason}`, () => {
  it('starts AS, MCP server and demo drive, waits for all, prints the URLs, stops all on SIGINT with exit code 0', async () => {
    const { asPort, mcpPort, drivePort } = await freeStackPorts();
    const proc = run(process.execPath, [script], stackEnv({ asPort, mcpPort, drivePort }), root);
    try {
      await proc.waitForOutput(/\[start\] ready/, 90_000);
      const issuer = `http://localhost:${asPort}`;
      const metadata = (await (await fetch(`${issuer}/.well-known/oauth-authorization-server`)).json()) as Record<string, any>;
      expect(metadata.issuer).toBe(issuer);
      const prm = (await (await fetch(`http://localhost:${mcpPort}/.well-known/oauth-protected-resource/mcp`)).json()) as Record<
        string,
        any
      >;
      expect(prm.resource).toBe(`http://localhost:${mcpPort}/mcp`);
      expect(prm.authorization_servers).toEqual([issuer]);
      const output = proc.output();
      expect(output).toContain(issuer);
      expect(output).toContain(`http://localhost:${mcpPort}/mcp`);
      expect(output).toMatch(/^\[auth\] /m);
      expect(output).toMatch(/^\[mcp\] /m);
      // The demo drive (issue 41): its own OAuth metadata on DEMO_DRIVE_PORT, its account printed,
      // our AS's connect callback registered as its client's redirect URI.
      const drive = `http://localhost:${drivePort}`;
      const driveMetadata = (await (await fetch(`${drive}/.well-known/oauth-authorization-server`)).json()) as Record<string, any>;
      expect(driveMetadata).toMatchObject({ issuer: drive, authorization_response_iss_parameter_supported: true });
      expect(output).toContain(`[start]   demo drive            ${drive}`);
      expect(output).toMatch(/^\[drive\] listening on 127\.0\.0\.1:\d+ .*sign in as demo \/ demo-drive-password$/m);
      const authorize = new URL(driveMetadata.authorization_endpoint);
      for (const [k, v] of Object.entries({
        response_type: 'code',
        client_id: 'mcp-auth-kit-demo',
        redirect_uri: `${issuer}/connect/callback`,
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        code_challenge_method: 'S256',
      }))
        authorize.searchParams.set(k, v);
      const signIn = await fetch(authorize);
      expect(signIn.status).toBe(200);
      expect(await signIn.text()).toContain('MCP auth kit (demo)');
    } finally {
      proc.child.kill('SIGINT');
    }
    const { code } = await proc.exited;
    expect(code).toBe(0);
    await expectClosed(asPort, mcpPort, drivePort);
  });

  it('Ctrl-C in a terminal (SIGINT to the whole process group) stops everything with exit code 0', async () => {
    const { asPort, mcpPort, drivePort } = await freeStackPorts();
    const proc = run(process.execPath, [script], stackEnv({ asPort, mcpPort, drivePort }), root, { detached: true });
    try {
      await proc.waitForOutput(/\[start\] ready/, 90_000);
      process.kill(-proc.child.pid!, 'SIGINT');
      const { code } = await proc.exited;
      expect(code).toBe(0);
      expect(proc.output()).not.toMatch(/exited unexpectedly/);
      await expectClosed(asPort, mcpPort, drivePort);
    } finally {
      try {
        process.kill(-proc.child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  });

  it('under npm, if its parent shell is killed (signal sent to npm only), it stops both by itself', async () => {
    const { asPort, mcpPort, drivePort } = await freeStackPorts();
    // Like `npm start`: npm → sh -c → node scripts/start.mjs (`; true` keeps sh from exec'ing node).
    const proc = run(
      '/bin/sh',
      ['-c', `"${process.execPath}" "${script}"; true`],
      stackEnv({ asPort, mcpPort, drivePort }, { npm_lifecycle_event: 'start' }),
      root,
    );
    await proc.waitForOutput(/\[start\] ready/, 90_000);
    proc.child.kill('SIGKILL');
    await proc.waitForOutput(/\[start\] stopped/, 30_000).catch(() => undefined);
    expect(proc.output()).toMatch(/parent process is gone/);
    await expectClosed(asPort, mcpPort, drivePort);
  });

  it('when a running child dies, stops the others and exits non-zero', async () => {
    const { asPort, mcpPort, drivePort } = await freeStackPorts();
    const proc = run(process.execPath, [script], stackEnv({ asPort, mcpPort, drivePort }), root);
    try {
      await proc.waitForOutput(/\[start\] ready/, 90_000);
      expect(await isListening(asPort)).toBe(true);
      const mcpPid = Number(/started the demo MCP server \(pid (\d+)\)/.exec(proc.output())?.[1]);
      expect(mcpPid).toBeGreaterThan(0);
      process.kill(mcpPid, 'SIGKILL');
      const { code } = await proc.exited;
      expect(code).not.toBe(0);
      expect(proc.output()).toMatch(/demo MCP server exited unexpectedly \(SIGKILL\)/);
      await expectClosed(asPort, drivePort);
    } finally {
      proc.child.kill('SIGKILL');
    }
  });

  /** Something else owns `port` on 127.0.0.1; `handler` answers its HTTP requests, else connections are dropped. */
  async function holdPort(port: number, handler?: RequestListener): Promise<Server> {
    const holder: Server = handler ? createHttpServer(handler) : createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => holder.listen(port, '127.0.0.1', resolve));
    return holder;
  }
  const release = (holder: Server) => new Promise<void>((resolve) => holder.close(() => resolve()));

  /** Runs `fn` while something else owns `port` (see holdPort). */
  async function whileHeld(port: number, handler: RequestListener | undefined, fn: () => Promise<void>): Promise<void> {
    const holder = await holdPort(port, handler);
    try {
      await fn();
    } finally {
      await release(holder);
    }
  }

  async function startWith(env: Record<string, string>) {
    const proc = run(
      process.execPath,
      [script],
      cleanEnv({ DATA_DIR: tempDataDir(), DEMO_DRIVE_PORT: String(await freePort()), ...env }),
      root,
    );
    const { code } = await proc.exited;
    const lines = proc
      .output()
      .split('\n')
      .filter((l) => l.startsWith('[start]'));
    return { code, lines, output: proc.output() };
  }

  /** Starts with `env`, which is refused before anything starts: exit 1 with exactly these `[start]` lines. */
  async function refusedStart(env: Record<string, string>, lines: string[]) {
    const r = await startWith(env);
    expect(r.code).toBe(1);
    expect(r.lines).toEqual(lines);
    return r;
  }

  it('a taken MCP port is named with its setting before anything starts: no "ready", exit 1', async () => {
    const asPort = await freePort();
    const mcpPort = await freePort();
    await whileHeld(mcpPort, undefined, async () => {
      const r = await refusedStart({ AS_PORT: String(asPort), MCP_PORT: String(mcpPort) }, [
        `[start] port ${mcpPort} (MCP_PORT, the demo MCP server) is already in use on 127.0.0.1`,
        '[start]   another program holds it: stop that program',
        '[start]   or start on another port: MCP_PORT=<port> npm start (MCP_RESOURCE follows: http://localhost:<port>/mcp)',
        '[start] nothing was started',
      ]);
      expect(r.output).not.toMatch(/\[start\] ready|started the/);
      expect(await isListening(asPort)).toBe(false);
    });
  });

  it('a taken AS port held by an earlier stack: says what answers there and how to stop it or move (explicit AS_ISSUER named)', async () => {
    const asPort = await freePort();
    const mcpPort = await freePort();
    const issuer = `http://localhost:${asPort}`;
    // Stands in for an earlier `npm start`'s authorization server (RFC 8414 metadata).
    await whileHeld(
      asPort,
      (req, res) => {
        if (req.url === '/.well-known/oauth-authorization-server') {
          res.setHeader('content-type', 'application/json');
          res.end(JSON.stringify({ issuer }));
        } else {
          res.statusCode = 404;
          res.end();
        }
      },
      async () => {
        const r = await refusedStart({ AS_PORT: String(asPort), MCP_PORT: String(mcpPort), AS_ISSUER: issuer }, [
          `[start] port ${asPort} (AS_PORT, the authorization server) is already in use on 127.0.0.1`,
          `[start]   an authorization server answers there (issuer ${issuer}): is an earlier \`npm start\` still running? Stop it (Ctrl-C in its terminal)`,
          `[start]   or start on another port: AS_PORT=<port> npm start (AS_ISSUER is set (${issuer}): change its port too)`,
          '[start] nothing was started',
        ]);
        expect(r.output).not.toMatch(/\[start\] ready|started the/);
        expect(await isListening(mcpPort)).toBe(false);
      },
    );
  });

  it('a taken DEMO_DRIVE_PORT (the demo drive, on 127.0.0.1) is named before anything starts', async () => {
    const drivePort = await freePort();
    await whileHeld(drivePort, undefined, async () => {
      const r = await refusedStart(
        {
          AS_PORT: String(await freePort()),
          MCP_PORT: String(await freePort()),
          DEMO_DRIVE_PORT: String(drivePort),
        },
        [
          `[start] port ${drivePort} (DEMO_DRIVE_PORT, the demo drive) is already in use on 127.0.0.1`,
          '[start]   another program holds it: stop that program',
          '[start]   or start on another port: DEMO_DRIVE_PORT=<port> npm start',
          '[start] nothing was started',
        ],
      );
      expect(r.output).not.toMatch(/\[start\] ready|started the/);
    });
  });

  it('the demo drive on the AS port is refused before anything starts', async () => {
    const port = await freePort();
    await refusedStart({ AS_PORT: String(port), MCP_PORT: String(await freePort()), DEMO_DRIVE_PORT: String(port) }, [
      `[start] AS_PORT and DEMO_DRIVE_PORT are both ${port}: the authorization server and the demo drive need a port each`,
      '[start]   (defaults: AS_PORT=9000, DEMO_DRIVE_PORT=9010)',
      '[start] nothing was started',
    ]);
  });

  it('the same port for both servers is refused before anything starts', async () => {
    const port = await freePort();
    await refusedStart({ AS_PORT: String(port), MCP_PORT: String(port) }, [
      `[start] AS_PORT and MCP_PORT are both ${port}: the authorization server and the demo MCP server need a port each`,
      '[start]   (defaults: AS_PORT=9000, MCP_PORT=3000)',
      '[start] nothing was started',
    ]);
  });
});

describe('scripts/start.mjs input checks', () => {
  it('refuses an invalid AS_PORT before starting anything', async () => {
    const proc = run(process.execPath, [script], cleanEnv({ AS_PORT: 'ninety', MCP_PORT: '1' }), root);
    expect((await proc.exited).code).toBe(1);
    expect(proc.output()).toMatch(/AS_PORT must be a port number/);
  });
});
