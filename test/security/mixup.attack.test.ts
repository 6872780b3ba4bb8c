import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { McpAuthClient, MemoryStore, createAuthFetch } from '@mcp-auth-kit/client';
import { HeadlessBrowser } from '@mcp-auth-kit/test-utils';
import { authorizeCode, pkcePair, registerClient, startAttackStack, type AttackStack } from './helpers/support.js';
import { isLoopbackCallback } from '../helpers/loopback.js';

/**
 * AS mix-up (RFC 9207 §2.4, OAuth 2.1 §7.14; MCP authorization §Authorization Server Binding):
 * our client library, talking to the real demo stack, receives an authorization response whose
 * front channel was tampered with. A second, honest-looking AS provides the attacker's issuer.
 */
describe('attack: authorization server mix-up against @mcp-auth-kit/client', () => {
  let stack: AttackStack;
  let second: AttackStack;
  beforeAll(async () => {
    [stack, second] = await Promise.all([startAttackStack(), startAttackStack()]);
  });
  afterAll(async () => {
    await stack?.close();
    await second?.close();
  });

  /** Runs one authorization with the client; `tamper` rewrites the callback before delivery. */
  async function authorizeWith(tamper: (callback: URL) => URL) {
    const store = new MemoryStore();
    const ua = new HeadlessBrowser();
    const delivered: URL[] = [];
    const auth = new McpAuthClient({
      clientName: 'mix-up victim',
      store,
      authorizationTimeoutMs: 5_000,
      openAuthorizationUrl: async (url) => {
        const callback = tamper(await ua.followToCallback(url, isLoopbackCallback));
        delivered.push(callback);
        const res = await fetch(callback).catch(() => undefined);
        await res?.arrayBuffer();
      },
    });
    const authFetch = createAuthFetch(auth);
    let outcome: { status?: number; error?: unknown } = {};
    try {
      const res = await authFetch(stack.mcpUrl, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-11-25',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'whoami', arguments: {} } }),
      });
      outcome = { status: res.status };
      await res.arrayBuffer();
    } catch (error) {
      outcome = { error };
    }
    return { outcome, tokens: await auth.getTokens(stack.mcpUrl).catch(() => undefined), delivered };
  }

  it('baseline: the untampered response completes and the tool call succeeds', async () => {
    const { outcome, tokens } = await authorizeWith((u) => u);
    expect(outcome.status).toBe(200);
    expect(tokens?.access_token).toBeTruthy();
  });

  it('RFC 9207 §2.4: iss of ANOTHER (real, reachable) AS in the response → refused, no token obtained', async () => {
    const { outcome, tokens, delivered } = await authorizeWith((u) => {
      const url = new URL(u);
      url.searchParams.set('iss', second.issuer);
      return url;
    });
    expect(delivered[0]!.searchParams.get('iss')).toBe(second.issuer);
    expect(outcome.status).toBeUndefined();
    expect(outcome.error).toBeInstanceOf(Error);
    expect(tokens?.access_token).toBeUndefined();
  });

  it('RFC 9207 §2.4: iss missing although the AS advertises authorization_response_iss_parameter_supported → refused', async () => {
    const { outcome, tokens } = await authorizeWith((u) => {
      const url = new URL(u);
      url.searchParams.delete('iss');
      return url;
    });
    expect(outcome.error).toBeInstanceOf(Error);
    expect(tokens?.access_token).toBeUndefined();
  });

  it('OAuth 2.1 §7.10 (CSRF): state replaced by the attacker → refused', async () => {
    const { outcome, tokens } = await authorizeWith((u) => {
      const url = new URL(u);
      url.searchParams.set('state', 'attacker-state');
      return url;
    });
    expect(outcome.error).toBeInstanceOf(Error);
    expect(tokens?.access_token).toBeUndefined();
  });

  it('code injection: a code the second AS issued for its own flow, with iss rewritten to ours → refused at the token endpoint', async () => {
    // The attacker runs a real flow at the second AS and injects that code into our victim's callback.
    const foreignClient = await registerClient(second);
    const foreignCode = (await authorizeCode(second, { clientId: foreignClient, challenge: pkcePair().challenge })).get('code')!;
    const { outcome, tokens } = await authorizeWith((u) => {
      const url = new URL(u);
      url.searchParams.set('code', foreignCode);
      return url;
    });
    expect(outcome.error).toBeInstanceOf(Error);
    expect(tokens?.access_token).toBeUndefined();
  });
});
