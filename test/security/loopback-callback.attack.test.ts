import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { McpAuthClient, MemoryStore, createAuthFetch } from '@mcp-auth-kit/client';
import { cliLogin } from '../helpers/cli.js';
import { HeadlessBrowser } from '@mcp-auth-kit/test-utils';
import { startAttackStack, type AttackStack } from './helpers/support.js';
import { isLoopbackCallback } from '../helpers/loopback.js';

/**
 * Forged callbacks at the native client's loopback redirect listener (RFC 8252 §7.3, §8.1; RFC 6749
 * §10.12; OAuth 2.1 §7.10): any local process or web page can send a GET to the listener's port.
 * Only the response carrying the authorization request's `state` may end the wait; forged ones
 * get a 400 page and the login goes on until the real response (or the timeout).
 */
const FORGERIES = [
  (_state: string) => 'code=forged-code&state=not-the-state',
  (_state: string) => 'code=forged-code',
  (_state: string) => 'error=access_denied&state=not-the-state',
  (_state: string) => 'error=access_denied',
  (state: string) => `code=forged-code&state=${state.toUpperCase() === state ? state.toLowerCase() : state.toUpperCase()}`,
  (state: string) => `code=forged-code&state=${state}x`,
];

const WHOAMI: RequestInit = {
  method: 'POST',
  headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
  body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'whoami', arguments: {} } }),
};

/** Fires every forgery at the redirect URI named in the authorization URL; returns the statuses. */
async function forge(authorizationUrl: URL): Promise<number[]> {
  const redirectUri = authorizationUrl.searchParams.get('redirect_uri')!;
  const state = authorizationUrl.searchParams.get('state')!;
  const statuses: number[] = [];
  for (const query of FORGERIES) {
    const res = await fetch(`${redirectUri}?${query(state)}`);
    await res.arrayBuffer();
    statuses.push(res.status);
  }
  return statuses;
}

describe('attack: forged callbacks at the loopback redirect listener', () => {
  let stack: AttackStack;
  let home: string;
  beforeAll(async () => {
    stack = await startAttackStack();
    home = await mkdtemp(join(tmpdir(), 'mak-loopback-'));
  });
  afterAll(async () => {
    await stack?.close();
    if (home) await rm(home, { recursive: true, force: true });
  });

  it('library: wrong state, no state, error=access_denied with a wrong state, then the real response → login completes', async () => {
    const ua = new HeadlessBrowser();
    const statuses: number[] = [];
    const auth = new McpAuthClient({
      clientName: 'loopback victim',
      store: new MemoryStore(),
      authorizationTimeoutMs: 10_000,
      openAuthorizationUrl: async (url) => {
        statuses.push(...(await forge(url)));
        await ua.followToCallback(url, isLoopbackCallback, { deliver: true });
      },
    });
    const res = await createAuthFetch(auth)(stack.mcpUrl, WHOAMI);
    expect(statuses).toEqual(FORGERIES.map(() => 400));
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('notes:read');
  });

  it('library: only forged callbacks → the wait ends by the timeout, not by a forgery', async () => {
    const auth = new McpAuthClient({
      clientName: 'loopback victim',
      store: new MemoryStore(),
      authorizationTimeoutMs: 1_500,
      openAuthorizationUrl: async (url) => void (await forge(url)),
    });
    await expect(auth.authorize(stack.mcpUrl)).rejects.toMatchObject({ code: 'MCP_AUTH_AUTHORIZATION_TIMEOUT' });
  });

  it('CLI: `mcp-auth-kit login` survives the forged callbacks and completes with the real one', async () => {
    const statuses: number[] = [];
    const env = { ...process.env, MCP_AUTH_KIT_HOME: home, CI: 'true' };
    const { exitCode, stderr } = await cliLogin(stack.mcpUrl, env, async (url) => void statuses.push(...(await forge(url))));
    expect(statuses).toEqual(FORGERIES.map(() => 400));
    expect(exitCode, stderr).toBe(0);
  });
});
