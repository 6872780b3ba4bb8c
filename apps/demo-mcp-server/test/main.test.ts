import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { useFakeAuthorizationServer } from './helpers/fake-as.js';
import { freePort, isListening } from '@mcp-auth-kit/test-utils';
import { cleanEnv, run } from './helpers/process.js';

// The runnable entry (dist/main.js, built by `npm test` / `npm run build`) as a real process.
const main = fileURLToPath(new URL('../dist/main.js', import.meta.url));

describe.skipIf(!existsSync(main))('dist/main.js', () => {
  const as = useFakeAuthorizationServer();

  it('serves PRM for http://localhost:<MCP_PORT>/mcp on loopback, answers /healthz, exits 0 on SIGINT', async () => {
    const port = await freePort();
    const proc = run(process.execPath, [main], cleanEnv({ MCP_PORT: String(port), AS_ISSUER: as().issuer }));
    try {
      await proc.waitForOutput(/MCP endpoint/);
      const prm = (await (await fetch(`http://localhost:${port}/.well-known/oauth-protected-resource/mcp`)).json()) as Record<string, any>;
      expect(prm.resource).toBe(`http://localhost:${port}/mcp`);
      expect(prm.authorization_servers).toEqual([as().issuer]);
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
      expect(proc.output()).toContain('127.0.0.1');
    } finally {
      proc.child.kill('SIGINT');
    }
    const { code } = await proc.exited;
    expect(code).toBe(0);
    expect(await isListening(port)).toBe(false);
  });

  it('logs client rejections by kind only: no token and no client-supplied header value in the output', async () => {
    const port = await freePort();
    const proc = run(process.execPath, [main], cleanEnv({ MCP_PORT: String(port), AS_ISSUER: as().issuer }));
    const token = await as().sign({ aud: `http://localhost:${port}/mcp` });
    try {
      await proc.waitForOutput(/MCP endpoint/);
      const res = await fetch(`http://127.0.0.1:${port}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2026-07-28',
          'mcp-method': 'tools/call',
          'mcp-name': 'CLIENT-SUPPLIED-VALUE',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: {
            name: 'whoami',
            arguments: {},
            _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} },
          },
        }),
      });
      expect(res.status).toBe(400);
      await proc.waitForOutput(/Rejected inbound request \(name-header-mismatch\)/, 10_000);
    } finally {
      proc.child.kill('SIGINT');
    }
    await proc.exited;
    expect(proc.output()).not.toContain('CLIENT-SUPPLIED-VALUE');
    expect(proc.output()).not.toContain(token);
  });

  it('MCP_RESOURCE overrides the resource; SIGTERM also stops cleanly', async () => {
    const port = await freePort();
    const resource = `http://localhost:${port}/notes/mcp`;
    const proc = run(
      process.execPath,
      [main],
      cleanEnv({ MCP_PORT: String(port), AS_ISSUER: as().issuer, MCP_RESOURCE: resource, MCP_HOST: '127.0.0.1' }),
    );
    try {
      await proc.waitForOutput(/MCP endpoint/);
      const res = await fetch(`http://127.0.0.1:${port}/.well-known/oauth-protected-resource/notes/mcp`);
      expect(((await res.json()) as Record<string, unknown>).resource).toBe(resource);
      const challenge = await fetch(`http://127.0.0.1:${port}/notes/mcp`, { method: 'POST' });
      expect(challenge.status).toBe(401);
    } finally {
      proc.child.kill('SIGTERM');
    }
    expect((await proc.exited).code).toBe(0);
  });

  it('a port already in use → exits non-zero with a message, no stack', async () => {
    const port = await freePort();
    const first = run(process.execPath, [main], cleanEnv({ MCP_PORT: String(port), AS_ISSUER: as().issuer }));
    await first.waitForOutput(/MCP endpoint/);
    const second = run(process.execPath, [main], cleanEnv({ MCP_PORT: String(port), AS_ISSUER: as().issuer }));
    const { code } = await second.exited;
    first.child.kill('SIGINT');
    await first.exited;
    expect(code).not.toBe(0);
    expect(second.output()).toMatch(/failed to start/);
    expect(second.output()).not.toMatch(/\n\s+at /);
  });

  it('an invalid MCP_PORT → exits non-zero with a message', async () => {
    const proc = run(process.execPath, [main], cleanEnv({ MCP_PORT: 'eighty', AS_ISSUER: as().issuer }));
    expect((await proc.exited).code).not.toBe(0);
    expect(proc.output()).toMatch(/MCP_PORT/);
  });

  it('every bad variable is listed at once (MCP_PORT and SHUTDOWN_TIMEOUT_MS)', async () => {
    const proc = run(process.execPath, [main], cleanEnv({ MCP_PORT: 'eighty', SHUTDOWN_TIMEOUT_MS: 'soon', AS_ISSUER: as().issuer }));
    expect((await proc.exited).code).not.toBe(0);
    expect(proc.output()).toMatch(
      /Invalid configuration:\n {2}- MCP_PORT must be a port number \(0-65535\)\n {2}- SHUTDOWN_TIMEOUT_MS must be a number of milliseconds/,
    );
  });
});
