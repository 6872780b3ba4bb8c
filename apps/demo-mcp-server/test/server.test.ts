import { describe, expect, it } from 'vitest';
import { ConfigError } from '@mcp-auth-kit/protocol';
import { createDemoApp, defaultAllowedOrigins, startDemoServer } from '../src/index.js';
import { freePort, isListening } from '@mcp-auth-kit/test-utils';

describe('startDemoServer', () => {
  it('by default listens on loopback only: 127.0.0.1, plus ::1 where IPv6 loopback exists', async () => {
    const server = await startDemoServer({ port: 0, issuer: 'http://127.0.0.1:9' });
    try {
      expect(server.hosts[0]).toBe('127.0.0.1');
      expect(server.hosts.every((host) => host === '127.0.0.1' || host === '::1')).toBe(true);
      for (const host of server.hosts) {
        const res = await fetch(`http://${host.includes(':') ? `[${host}]` : host}:${server.port}/healthz`);
        expect(res.status).toBe(200);
      }
      expect(server.url).toBe(`http://localhost:${server.port}/mcp`);
    } finally {
      await server.close();
    }
    expect(await isListening(server.port)).toBe(false);
  });

  it('a resource on another host: url points at the listener, resource is kept verbatim', async () => {
    const server = await startDemoServer({
      port: 0,
      host: '127.0.0.1',
      issuer: 'http://127.0.0.1:9',
      resource: 'https://mcp.example.com/tenant/mcp',
    });
    try {
      expect(server.resource).toBe('https://mcp.example.com/tenant/mcp');
      expect(server.url).toBe(`http://127.0.0.1:${server.port}/tenant/mcp`);
      const prm = await fetch(`http://127.0.0.1:${server.port}/.well-known/oauth-protected-resource/tenant/mcp`);
      expect(((await prm.json()) as Record<string, unknown>).resource).toBe('https://mcp.example.com/tenant/mcp');
    } finally {
      await server.close();
    }
  });

  it('close() is idempotent', async () => {
    const server = await startDemoServer({ port: 0, host: '127.0.0.1', issuer: 'http://127.0.0.1:9' });
    await Promise.all([server.close(), server.close()]);
    await server.close();
    expect(await isListening(server.port)).toBe(false);
  });

  it('an invalid resource is refused at startup and leaves no listener behind', async () => {
    const port = await freePort();
    await expect(startDemoServer({ port, host: '127.0.0.1', issuer: 'http://127.0.0.1:9', resource: 'not a url' })).rejects.toThrow(
      ConfigError,
    );
    expect(await isListening(port)).toBe(false);
  });

  it('every bad option is listed in one ConfigError', () => {
    let error: unknown;
    try {
      createDemoApp({ resource: 'not a url', issuer: 'nor this' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toEqual(['resource must be an absolute URL', 'issuer must be an absolute URL']);
    expect((error as ConfigError).message).toMatch(/^Invalid demo MCP server configuration:\n/);
  });

  it('RFC 8707 §2: a resource with a fragment is refused', () => {
    expect(() => createDemoApp({ resource: 'http://localhost:3000/mcp#x', issuer: 'http://localhost:9000' })).toThrow(/fragment/);
  });
});

describe('defaultAllowedOrigins', () => {
  it('a loopback resource allows its loopback aliases on the same port only', () => {
    expect(defaultAllowedOrigins(new URL('http://localhost:3000/mcp'))).toEqual([
      'http://localhost:3000',
      'http://127.0.0.1:3000',
      'http://[::1]:3000',
    ]);
  });

  it('a public resource allows exactly its own origin', () => {
    expect(defaultAllowedOrigins(new URL('https://mcp.example.com/mcp'))).toEqual(['https://mcp.example.com']);
  });
});
