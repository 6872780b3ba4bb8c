// RFC 9449 end to end: our client library (dpop: 'auto') against our AS and the demo MCP server,
// which advertises DPoP in its Protected Resource Metadata. The headless user agent plays the browser.
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { McpAuthClient, MemoryStore, createAuthFetch } from '@mcp-auth-kit/client';
import { calculateJwkThumbprint, decodeProtectedHeader, type JWK } from 'jose';
import { cliLogin, cliPath, useCliHome } from '../helpers/cli.js';
import { useDemoStack, type DemoStack } from '../helpers/stack.js';
import { HeadlessBrowser } from '@mcp-auth-kit/test-utils';
import { inspectAccessToken } from '../helpers/jwt.js';
import { isLoopbackCallback } from '../helpers/loopback.js';

interface Seen {
  url: string;
  method: string;
  headers: Headers;
  body: string | undefined;
  status: number;
  responseHeaders: Headers;
}

/** A client whose every request and response is recorded (the wire as the servers see it). */
function recordingClient(seen: Seen[], opened: URL[]) {
  const ua = new HeadlessBrowser();
  return new McpAuthClient({
    clientName: 'e2e dpop',
    store: new MemoryStore(),
    openAuthorizationUrl: async (url) => {
      opened.push(url);
      await ua.followToCallback(url, isLoopbackCallback, { deliver: true });
    },
    fetch: async (input, init) => {
      const request = new Request(input, init);
      const body = request.method === 'GET' || request.method === 'HEAD' ? undefined : await request.clone().text();
      const res = await globalThis.fetch(request);
      seen.push({
        url: request.url,
        method: request.method,
        headers: request.headers,
        body,
        status: res.status,
        responseHeaders: res.headers,
      });
      return res;
    },
  });
}

async function callWhoami(stack: DemoStack, auth: McpAuthClient) {
  const client = new Client({ name: 'e2e-dpop', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(stack.mcpUrl), { fetch: createAuthFetch(auth) }));
  const result = await client.callTool({ name: 'whoami', arguments: {} });
  await client.close();
  return result;
}

/** whoami answered for the token's subject (the tool ran with this token's identity). */
function expectWhoami(result: unknown, accessToken: string) {
  const { claims } = inspectAccessToken(accessToken);
  expect((result as { structuredContent?: { sub?: string } }).structuredContent?.sub).toBe(claims.sub);
}

/** Replays a recorded MCP request with chosen authorization headers. */
function replay(stack: DemoStack, original: Seen, headers: Record<string, string>) {
  const h = new Headers(original.headers);
  h.delete('authorization');
  h.delete('dpop');
  for (const [k, v] of Object.entries(headers)) h.set(k, v);
  return fetch(stack.mcpUrl, { method: original.method, headers: h, ...(original.body !== undefined && { body: original.body }) });
}

describe('e2e: DPoP-bound tokens (AS nonces required, demo server accepting DPoP and Bearer)', () => {
  const stack = useDemoStack({ asDpop: { requireNonce: true } });
  const seen: Seen[] = [];
  const opened: URL[] = [];
  const auth = recordingClient(seen, opened);

  const mcpCalls = () => seen.filter((s) => s.url === stack.mcpUrl);

  it('RFC 9449 §5 / §6.1 / §7.1: the PRM advertises DPoP, the token is DPoP-bound (cnf.jkt) and tools/call works with the DPoP scheme', async () => {
    const prm = (await (await fetch(new URL('/.well-known/oauth-protected-resource/mcp', stack.mcpUrl))).json()) as Record<string, unknown>;
    expect(prm.dpop_signing_alg_values_supported).toEqual(expect.arrayContaining(['ES256']));
    expect(prm.dpop_bound_access_tokens_required).toBe(false);

    const result = await callWhoami(stack, auth);

    const tokens = await auth.getTokens(stack.mcpUrl);
    expectWhoami(result, tokens!.access_token);
    expect(tokens?.token_type.toLowerCase()).toBe('dpop');
    const { claims } = inspectAccessToken(tokens!.access_token);
    expect((claims.cnf as { jkt?: string } | undefined)?.jkt).toBe(tokens!.dpop_jkt);

    // RFC 9449 §10: the authorization code was bound to the same key
    expect(opened).toHaveLength(1);
    expect(opened[0]!.searchParams.get('dpop_jkt')).toBe(tokens!.dpop_jkt);

    // RFC 9449 §8: the AS demanded a nonce once, and the client retried with it
    const tokenCalls = seen.filter((s) => s.url.endsWith('/token'));
    expect(tokenCalls.map((s) => s.status)).toEqual([400, 200]);
    expect(tokenCalls[0]!.responseHeaders.get('dpop-nonce')).toBeTruthy();
    expect(decodeProtectedHeader(tokenCalls[1]!.headers.get('dpop')!).typ).toBe('dpop+jwt');

    // every authorized MCP request used the DPoP scheme with a proof by the bound key
    const authorized = mcpCalls().filter((s) => s.headers.has('authorization'));
    expect(authorized.length).toBeGreaterThan(0);
    for (const s of authorized) {
      expect(s.headers.get('authorization')).toMatch(/^DPoP /);
      const proofHeader = decodeProtectedHeader(s.headers.get('dpop')!);
      expect(await calculateJwkThumbprint(proofHeader.jwk as JWK)).toBe(tokens!.dpop_jkt);
      // accepted by the middleware (202 notifications, 405 for the stateless GET stream come from MCP)
      expect([401, 403]).not.toContain(s.status);
    }
  });

  it('RFC 9449 §7.2: the same DPoP-bound token replayed as a Bearer token → 401 invalid_token', async () => {
    const tokens = await auth.getTokens(stack.mcpUrl);
    const original = mcpCalls().find((s) => s.status === 200 && s.headers.has('authorization'))!;
    const res = await replay(stack, original, { authorization: `Bearer ${tokens!.access_token}` });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer [^,]*error="invalid_token"/);
  });

  it('RFC 9449 §11.1: a proof replayed with its token → 401 invalid_dpop_proof', async () => {
    const original = mcpCalls().find((s) => s.status === 200 && s.headers.has('dpop'))!;
    const res = await replay(stack, original, {
      authorization: original.headers.get('authorization')!,
      dpop: original.headers.get('dpop')!,
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/DPoP [\s\S]*error="invalid_dpop_proof"/);
  });

  it('RFC 9449 §4.3: a stolen token with a proof by another key → 401', async () => {
    const { generateKeyPair, exportJWK, SignJWT } = await import('jose');
    const tokens = await auth.getTokens(stack.mcpUrl);
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    const { createHash, randomUUID } = await import('node:crypto');
    const proof = await new SignJWT({
      jti: randomUUID(),
      htm: 'POST',
      htu: stack.mcpUrl,
      iat: Math.floor(Date.now() / 1000),
      ath: createHash('sha256').update(tokens!.access_token).digest('base64url'),
    })
      .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: await exportJWK(publicKey) })
      .sign(privateKey);
    const original = mcpCalls().find((s) => s.status === 200 && s.headers.has('dpop'))!;
    const res = await replay(stack, original, { authorization: `DPoP ${tokens!.access_token}`, dpop: proof });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/DPoP [\s\S]*error="invalid_token"/);
  });

  it('refresh keeps the binding: the refreshed token has the same cnf.jkt and still works', async () => {
    const binding = (await auth.store.getServer(new URL(stack.mcpUrl).href)) ?? (await auth.discover(stack.mcpUrl));
    const before = await auth.getTokens(stack.mcpUrl);
    const refreshed = await auth.refresh(binding, before!.access_token);
    expect(refreshed?.access_token).not.toBe(before!.access_token);
    expect(refreshed?.token_type.toLowerCase()).toBe('dpop');
    expect((inspectAccessToken(refreshed!.access_token).claims.cnf as { jkt: string }).jkt).toBe(before!.dpop_jkt);
    expectWhoami(await callWhoami(stack, auth), refreshed!.access_token);
    expect(opened).toHaveLength(1);
  });

  it('MCP §Scope Challenge Handling with DPoP: a 403 insufficient_scope on the DPoP challenge leads to step-up, and the new token is DPoP-bound too', async () => {
    const before = opened.length;
    const client = new Client({ name: 'e2e-dpop', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(stack.mcpUrl), { fetch: createAuthFetch(auth) }));
    const added = await client.callTool({ name: 'add_note', arguments: { text: 'written with a DPoP-bound token' } });
    await client.close();
    expect(added.isError).not.toBe(true);
    expect(opened.length).toBe(before + 1);
    const challenge = mcpCalls()
      .find((s) => s.status === 403)!
      .responseHeaders.get('www-authenticate')!;
    expect(challenge).toMatch(/DPoP [\s\S]*error="insufficient_scope"/);
    const tokens = await auth.getTokens(stack.mcpUrl);
    expect(tokens!.scope).toContain('notes:write');
    expect((inspectAccessToken(tokens!.access_token).claims.cnf as { jkt: string }).jkt).toBe(tokens!.dpop_jkt);
  });
});

describe('e2e: DPoP required at the MCP server, with resource-server nonces (MCP_DPOP_REQUIRED)', () => {
  const stack = useDemoStack({ mcpDpop: { required: true, nonce: true } });
  const seen: Seen[] = [];
  const opened: URL[] = [];

  it('RFC 9728 §2 / RFC 9449 §9: the client follows dpop_bound_access_tokens_required and the use_dpop_nonce challenge', async () => {
    const auth = recordingClient(seen, opened);
    const result = await callWhoami(stack, auth);
    expectWhoami(result, (await auth.getTokens(stack.mcpUrl))!.access_token);
    const calls = seen.filter((s) => s.url === stack.mcpUrl && s.headers.has('authorization'));
    const nonceChallenge = calls.find((s) => s.status === 401);
    expect(nonceChallenge?.responseHeaders.get('www-authenticate')).toMatch(/^DPoP [\s\S]*error="use_dpop_nonce"/);
    expect(nonceChallenge?.responseHeaders.get('dpop-nonce')).toBeTruthy();
    const nonce = nonceChallenge!.responseHeaders.get('dpop-nonce');
    const after = calls.filter((s) => s.status === 200);
    expect(after.length).toBeGreaterThan(0);
    for (const s of after) {
      expect(s.headers.get('authorization')).toMatch(/^DPoP /);
      const payload = JSON.parse(Buffer.from(s.headers.get('dpop')!.split('.')[1]!, 'base64url').toString()) as { nonce?: string };
      expect(payload.nonce).toBe(nonce);
    }
  });

  it('RFC 9449 §7.2: a bearer-only client is refused with a DPoP challenge', async () => {
    const bearerOnly = new McpAuthClient({
      clientName: 'e2e bearer only',
      dpop: 'never',
      store: new MemoryStore(),
      openAuthorizationUrl: async (url) => {
        await new HeadlessBrowser().followToCallback(url, isLoopbackCallback, { deliver: true });
      },
    });
    const res = await bearerOnly.fetch(stack.mcpUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^DPoP /);
    expect(res.headers.get('www-authenticate')).not.toContain('Bearer');
  });
});

describe('e2e: the mcp-auth-kit CLI uses DPoP when the AS and the MCP server support it', () => {
  // Bearer refused at the MCP server: a call can only succeed with DPoP
  const stack = useDemoStack({ mcpDpop: { required: true } });
  const cli = useCliHome('mcp-auth-kit-cli-dpop-');

  it('login binds the code and tokens to a DPoP key; a later `call` process reuses key and tokens', async () => {
    const { authorizationUrl, exitCode, stderr } = await cliLogin(stack.mcpUrl, cli.env);
    const jkt = authorizationUrl.searchParams.get('dpop_jkt');
    expect(jkt).toBeTruthy();
    expect(exitCode, stderr).toBe(0);

    const whoami = await promisify(execFile)(process.execPath, [cliPath, 'call', stack.mcpUrl, 'whoami'], { env: cli.env });
    expect(whoami.stdout).toContain('notes:read');

    // the store file holds DPoP-bound tokens and the key they are bound to (one authorization only)
    const files = await import('node:fs/promises').then((fs) => fs.readdir(cli.home, { recursive: true }));
    const storeFile = files.map(String).find((f) => f.endsWith('.json'));
    const data = JSON.parse(await readFile(join(cli.home, storeFile!), 'utf8')) as {
      tokens: Record<string, { token_type: string; dpop_jkt?: string; access_token: string }>;
      dpop_keys?: Record<string, { jkt: string }>;
    };
    const tokens = Object.values(data.tokens)[0]!;
    expect(tokens.token_type.toLowerCase()).toBe('dpop');
    expect(tokens.dpop_jkt).toBe(jkt);
    expect(Object.values(data.dpop_keys ?? {}).map((k) => k.jkt)).toEqual([jkt]);
    expect((inspectAccessToken(tokens.access_token).claims.cnf as { jkt: string }).jkt).toBe(jkt);
  });
});
