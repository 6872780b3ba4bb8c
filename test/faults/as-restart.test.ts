import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAuthServer, type RunningAuthServer } from '@mcp-auth-kit/auth-server';
import { silentLogger } from '@mcp-auth-kit/authorization-server';
import { startDemoServer, type DemoServer } from '@mcp-auth-kit/demo-mcp-server';
import { freePort } from '@mcp-auth-kit/test-utils';
import {
  authorizeCode,
  callWhoami,
  codeGrantForm,
  expectOAuthError,
  pkcePair,
  postForm,
  refresh,
  registerClient,
  type AttackStack,
  type AsMetadata,
} from '../security/helpers/support.js';

/**
 * The AS restarts between the authorization response and the token request (SQLite file
 * store, same issuer and port): the code still redeems — or fails cleanly with invalid_grant —
 * and registrations, refresh tokens and signing keys survive the restart.
 */
describe('fault: AS restarted between authorization and token request (SQLite)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-auth-kit-restart-'));
  const file = join(dir, 'auth-server.sqlite');
  let port: number;
  let resource: string;
  let as: RunningAuthServer;
  let mcp: DemoServer;
  let stack: AttackStack;

  const start = async () =>
    startAuthServer({
      port,
      host: '127.0.0.1',
      resource,
      devAutoLogin: 'demo',
      storage: { kind: 'sqlite', file },
      logger: silentLogger,
      authorizationServer: { registration: { rateLimit: false } },
    });

  beforeAll(async () => {
    port = await freePort();
    const mcpPort = await freePort();
    resource = `http://localhost:${mcpPort}/mcp`;
    as = await start();
    mcp = await startDemoServer({ port: mcpPort, host: '127.0.0.1', resource, issuer: as.issuer, onError: () => {} });
    const metadata = (await (await fetch(`${as.issuer}/.well-known/oauth-authorization-server`)).json()) as AsMetadata;
    stack = { issuer: as.issuer, mcpUrl: mcp.url, as, mcp, metadata, close: async () => {} };
  });
  afterAll(async () => {
    await mcp?.close();
    await as?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('code issued before the restart redeems after it (or invalid_grant); client, refresh token and keys survive', async () => {
    const clientId = await registerClient(stack);
    // A grant completed before the restart, to check refresh and key persistence.
    const earlier = await (async () => {
      const { verifier, challenge } = pkcePair();
      const code = (await authorizeCode(stack, { clientId, challenge })).get('code')!;
      const res = await postForm(stack.metadata.token_endpoint, codeGrantForm({ code, clientId, verifier, resource: stack.mcpUrl }));
      expect(res.status).toBe(200);
      return res.body as { access_token: string; refresh_token: string };
    })();
    const { verifier, challenge } = pkcePair();
    const code = (await authorizeCode(stack, { clientId, challenge })).get('code')!;

    await as.close();
    // Let the client side notice its pooled keep-alive sockets were closed by the old process.
    await new Promise((r) => setTimeout(r, 100));
    as = await start();
    expect(as.issuer).toBe(stack.issuer);
    stack.as = as;

    const res = await postForm(stack.metadata.token_endpoint, codeGrantForm({ code, clientId, verifier, resource: stack.mcpUrl }));
    if (res.status !== 200) {
      expectOAuthError(res, 'invalid_grant');
    } else {
      expect((await callWhoami(stack.mcpUrl, res.body.access_token as string)).status).toBe(200);
    }
    console.log(`AS restart: code issued before the restart → HTTP ${res.status} ${res.body.error ?? 'tokens'}`);

    // Acknowledged state survived: the access token from before still validates (same keys,
    // the RS may even refetch the JWKS), and its refresh token rotates.
    expect((await callWhoami(stack.mcpUrl, earlier.access_token)).status).toBe(200);
    const rotated = await refresh(stack, clientId, earlier.refresh_token);
    expect(rotated.status, rotated.text).toBe(200);
    const jwks = (await (await fetch(stack.metadata.jwks_uri)).json()) as { keys: Array<{ kid: string }> };
    expect(jwks.keys.length).toBeGreaterThan(0);
  });
});
