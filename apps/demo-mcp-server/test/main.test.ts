import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAuthorizationServer, type FakeAuthorizationServer } from './helpers/fake-as.js';
import { freePort, isListening } from './helpers/ports.js';
import { cleanEnv, run } from './helpers/process.js';

// The runnable entry (dist/main.js, built by `npm test` / `npm run build`) as a real process.
const main = fileURLToPath(new URL('../dist/main.js', import.meta.url));

describe.skipIf(!existsSync(main))('dist/main.js', () => {
  let as: FakeAuthorizationServer;
  beforeAll(async () => {
    as = await startFakeAuthorizationServer();
  });
  afterAll(async () => as?.close());

  it('serves PRM for http://localhost:<MCP_PORT>/mcp on loopback, answers /healthz, exits 0 on SIGINT', async () => {
    const port = await freePort();
    const proc = run(process.execPath, [main], cleanEnv({ MCP_PORT: String(port), AS_ISSUER: as.issuer }));
    try {
      await proc.waitForOutput(/MCP endpoint/);
      const prm = await (await fetch(`http://localhost:${port}/.well-known/oauth-protected-resource/mcp`)).json();
      expect(prm.resource).toBe(`http://localhost:${port}/mcp`);
      expect(prm.authorization_servers).toEqual([as.issuer]);
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
      expect(proc.output()).toContain('127.0.0.1');
    } finally {
      proc.child.kill('SIGINT');
    }
    const { code } = await proc.exited;
    expect(code).toBe(0);
    expect(await isListening(port)).toBe(false);
  });

  it('MCP_RESOURCE overrides the resource; SIGTERM also stops cleanly', async () => {
    const port = await freePort();
    const resource = `http://localhost:${port}/notes/mcp`;
    const proc = run(
      process.execPath,
      [main],
      cleanEnv({ MCP_PORT: String(port), AS_ISSUER: as.issuer, MCP_RESOURCE: resource, MCP_HOST: '127.0.0.1' }),
    );
    try {
      await proc.waitForOutput(/MCP endpoint/);
      const res = await fetch(`http://127.0.0.1:${port}/.well-known/oauth-protected-resource/notes/mcp`);
      expect((await res.json()).resource).toBe(resource);
      const challenge = await fetch(`http://127.0.0.1:${port}/notes/mcp`, { method: 'POST' });
      expect(challenge.status).toBe(401);
    } finally {
      proc.child.kill('SIGTERM');
    }
    expect((await proc.exited).code).toBe(0);
  });

  it('a port already in use → exits non-zero with a message, no stack', async () => {
    const port = await freePort();
    const first = run(process.execPath, [main], cleanEnv({ MCP_PORT: String(port), AS_ISSUER: as.issuer }));
    await first.waitForOutput(/MCP endpoint/);
    const second = run(process.execPath, [main], cleanEnv({ MCP_PORT: String(port), AS_ISSUER: as.issuer }));
    const { code } = await second.exited;
    first.child.kill('SIGINT');
    await first.exited;
    expect(code).not.toBe(0);
    expect(second.output()).toMatch(/failed to start/);
    expect(second.output()).not.toMatch(/\n\s+at /);
  });

  it('an invalid MCP_PORT → exits non-zero with a message', async () => {
    const proc = run(process.execPath, [main], cleanEnv({ MCP_PORT: 'eighty', AS_ISSUER: as.issuer }));
    expect((await proc.exited).code).not.toBe(0);
    expect(proc.output()).toMatch(/MCP_PORT/);
  });
});
