import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignJWT, importJWK, type JWK } from 'jose';
import { runAdmin, type AdminIo } from '@mcp-auth-kit/auth-server';
import { revokeRememberedGrant } from '@mcp-auth-kit/authorization-server';
import type { HeadlessBrowser } from '@mcp-auth-kit/test-utils';
import { postForm, startAttackStack, type AttackStack } from './helpers/support.js';
import { startFakeProvider, type FakeProvider } from './helpers/third-party-provider.js';
import {
  ALICE,
  ALICE_DRIVE,
  ACCESS_TOKEN_TYPE,
  MALLORY,
  OTHER_CLIENT,
  OTHER_MCP,
  TOKEN_EXCHANGE,
  VAULT_CLIENT,
  VAULT_MCP,
  completeConnect,
  connectionsOf,
  exchange,
  mcpAccessToken,
  mcpServerClient,
  twoUserVaultOptions,
  type ExchangeAnswer,
} from './helpers/third-party-flow.js';

const MACHINE = { id: 'vault-machine', secret: 'vault-machine-secret-0123456789' };

/**
 * Issue 41, the RFC 8693 token exchange under attack: an MCP server gets a provider token only
 * for a provider its resource may use, only for the user of the MCP access token it presents,
 * only while that token is valid (signature, `exp`), live (its grant not revoked), for that very
 * server (`aud`), and for an enabled account. Refusals carry no token.
 */
describe('attack: an MCP server exchanging for third-party tokens it must not get', () => {
  const dir = mkdtempSync(join(tmpdir(), 'third-party-exchange-'));
  const env = { DATABASE_URL: `sqlite:${join(dir, 'as.sqlite')}` };
  let provider: FakeProvider;
  let stack: AttackStack;
  let alice: { accessToken: string; ua: HeadlessBrowser };

  beforeAll(async () => {
    provider = await startFakeProvider([{ ...ALICE_DRIVE, files: ['alice.txt'] }]);
    const options = twoUserVaultOptions(provider);
    // a machine client of the vault's MCP server resource: its token names no user
    options.authorizationServer.clients.push({
      ...mcpServerClient(MACHINE.id, MACHINE.secret, VAULT_MCP),
      grant_types: ['client_credentials'],
      scope: 'notes:read',
      resource: undefined as unknown as string,
    });
    stack = await startAttackStack({ ...options, storage: { kind: 'sqlite', file: join(dir, 'as.sqlite') } });
    provider.redirectUri = `${stack.issuer}/connect/callback`;
    alice = await mcpAccessToken(stack.issuer, ALICE, VAULT_MCP);
    const first = await exchange(stack.issuer, VAULT_CLIENT, alice.accessToken);
    const page = await completeConnect(String(first.body.connect_uri), alice.ua, { providerUser: ALICE_DRIVE, provider });
    expect(page.body).toContain('Drive is connected');
  });
  afterAll(async () => {
    await stack?.close();
    await provider?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A refusal: the code, no token, nothing of the subject token echoed. */
  function refused(res: ExchangeAnswer, error: string, status = 400) {
    expect({ status: res.status, error: res.body.error }, res.text).toEqual({ status, error });
    expect(res.body.access_token).toBeUndefined();
    expect(res.text).not.toContain(alice.accessToken);
    for (const t of provider.issued) expect(res.text).not.toContain(t);
  }

  it('the baseline: the vault’s MCP server gets alice’s drive token with alice’s MCP token', async () => {
    const res = await exchange(stack.issuer, VAULT_CLIENT, alice.accessToken);
    expect(res.status, res.text).toBe(200);
    expect(res.body.issued_token_type).toBe(ACCESS_TOKEN_TYPE);
  });

  it('resource A asking for a provider only resource B may use, and B for A’s: invalid_target (RFC 8693 §2.2.2), whatever the user connected', async () => {
    refused(await exchange(stack.issuer, VAULT_CLIENT, alice.accessToken, 'calendar'), 'invalid_target');
    const forOther = await mcpAccessToken(stack.issuer, ALICE, OTHER_MCP, alice.ua);
    refused(await exchange(stack.issuer, OTHER_CLIENT, forOther.accessToken, 'drive'), 'invalid_target');
    refused(await exchange(stack.issuer, VAULT_CLIENT, alice.accessToken, 'no-such-provider'), 'invalid_target');
  });

  it('another user’s sub: the token decides whose connection is used — mallory’s token gets mallory’s own connect URL, never alice’s token', async () => {
    const mallory = await mcpAccessToken(stack.issuer, MALLORY, VAULT_MCP);
    const res = await exchange(stack.issuer, VAULT_CLIENT, mallory.accessToken);
    refused(res, 'interaction_required');
    // that URL is mallory's: alice (signed in) cannot complete it
    const page = await alice.ua.follow(String(res.body.connect_uri), () => false);
    expect((page as { status: number }).status).toBe(403);
    expect(await connectionsOf(stack.as.server.store, 'mallory')).toEqual([]);
  });

  it('a subject token whose audience is another resource (even alice’s own): invalid_grant', async () => {
    const forOther = await mcpAccessToken(stack.issuer, ALICE, OTHER_MCP, alice.ua);
    refused(await exchange(stack.issuer, VAULT_CLIENT, forOther.accessToken), 'invalid_grant');
    refused(await exchange(stack.issuer, OTHER_CLIENT, alice.accessToken, 'calendar'), 'invalid_grant');
    const forDemo = await mcpAccessToken(stack.issuer, ALICE, stack.mcpUrl, alice.ua);
    refused(await exchange(stack.issuer, VAULT_CLIENT, forDemo.accessToken), 'invalid_grant');
  });

  it('an expired token signed by this very server, one signed by another key, a client credentials token, garbage: invalid_grant', async () => {
    const [current] = await stack.as.server.store.keys.signingKeys();
    const jwk = current!.jwk as JWK;
    const key = await importJWK(jwk, jwk.alg ?? 'ES256');
    const alg = jwk.alg ?? 'ES256';
    const claims = (exp: number) =>
      new SignJWT({ client_id: 'x', scope: 'notes:read', grant_id: 'g' })
        .setProtectedHeader({ alg, kid: jwk.kid, typ: 'at+jwt' })
        .setIssuer(stack.issuer)
        .setSubject('someone')
        .setAudience(VAULT_MCP)
        .setJti('j')
        .setIssuedAt(exp - 300)
        .setExpirationTime(exp);
    const now = Math.floor(Date.now() / 1000);
    refused(await exchange(stack.issuer, VAULT_CLIENT, await claims(now - 10).sign(key)), 'invalid_grant');
    const { privateKey } = await (await import('jose')).generateKeyPair(alg);
    refused(await exchange(stack.issuer, VAULT_CLIENT, await claims(now + 300).sign(privateKey)), 'invalid_grant');
    refused(await exchange(stack.issuer, VAULT_CLIENT, 'not-a-token'), 'invalid_grant');
    // a client credentials token for the right audience names no user
    const cc = await postForm(
      stack.metadata.token_endpoint,
      { grant_type: 'client_credentials', scope: 'notes:read', resource: VAULT_MCP },
      { authorization: `Basic ${Buffer.from(`${MACHINE.id}:${MACHINE.secret}`).toString('base64')}` },
    );
    expect(cc.status, cc.text).toBe(200);
    refused(await exchange(stack.issuer, VAULT_CLIENT, String(cc.body.access_token)), 'invalid_grant');
  });

  it('a revoked subject token (its grant ended on the account page or by the operator): invalid_grant', async () => {
    const fresh = await mcpAccessToken(stack.issuer, ALICE, VAULT_MCP, alice.ua);
    expect((await exchange(stack.issuer, VAULT_CLIENT, fresh.accessToken)).status).toBe(200);
    const account = (await stack.as.server.store.accounts.findByUsername('alice'))!;
    expect(await revokeRememberedGrant(stack.as.server.store, account.id, fresh.clientId)).toBe(true);
    refused(await exchange(stack.issuer, VAULT_CLIENT, fresh.accessToken), 'invalid_grant');
  });

  it('the MCP server’s own authentication: wrong secret → invalid_client (401); a client that is no MCP server → unauthorized_client; a public client → invalid_client', async () => {
    refused(await exchange(stack.issuer, { ...VAULT_CLIENT, secret: 'wrong' }, alice.accessToken), 'invalid_client', 401);
    const reg = await fetch(stack.metadata.registration_endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        client_name: 'confidential but no MCP server',
        redirect_uris: ['http://127.0.0.1/callback'],
        token_endpoint_auth_method: 'client_secret_basic',
      }),
    });
    const registered = (await reg.json()) as { client_id: string; client_secret: string };
    refused(
      await exchange(stack.issuer, { id: registered.client_id, secret: registered.client_secret }, alice.accessToken),
      'unauthorized_client',
    );
    const publicReg = await fetch(stack.metadata.registration_endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'public', redirect_uris: ['http://127.0.0.1/callback'], token_endpoint_auth_method: 'none' }),
    });
    const publicId = ((await publicReg.json()) as { client_id: string }).client_id;
    const res = await postForm(stack.metadata.token_endpoint, {
      grant_type: TOKEN_EXCHANGE,
      client_id: publicId,
      subject_token: alice.accessToken,
      subject_token_type: ACCESS_TOKEN_TYPE,
      audience: 'drive',
    });
    refused({ ...res, text: res.text }, 'invalid_client');
  });

  it('the request’s shape (RFC 8693 §2.1): another subject_token_type, an actor_token, a resource, no audience, another requested_token_type', async () => {
    const id = 'urn:ietf:params:oauth:token-type:id_token';
    refused(await exchange(stack.issuer, VAULT_CLIENT, alice.accessToken, 'drive', { subject_token_type: id }), 'invalid_request');
    refused(
      await exchange(stack.issuer, VAULT_CLIENT, alice.accessToken, 'drive', {
        actor_token: alice.accessToken,
        actor_token_type: ACCESS_TOKEN_TYPE,
      }),
      'invalid_request',
    );
    refused(
      await exchange(stack.issuer, VAULT_CLIENT, alice.accessToken, 'drive', { resource: 'https://drive.example/api' }),
      'invalid_target',
    );
    refused(await exchange(stack.issuer, VAULT_CLIENT, alice.accessToken, ''), 'invalid_request');
    refused(await exchange(stack.issuer, VAULT_CLIENT, alice.accessToken, 'drive', { requested_token_type: id }), 'invalid_request');
    refused(await exchange(stack.issuer, VAULT_CLIENT, alice.accessToken, 'drive', { scope: 'files.write' }), 'invalid_scope');
    expect((await exchange(stack.issuer, VAULT_CLIENT, alice.accessToken, 'drive', { scope: 'files.read' })).status).toBe(200);
  });

  it('a disabled account (admin `user disable`): invalid_grant, and its connections are deleted', async () => {
    const bob = { username: 'bob-vault', password: 'bob-vault-password' };
    const io: AdminIo & { out: (l: string) => void } = { out: () => {}, err: () => {}, readPassword: async () => bob.password };
    expect(await runAdmin(['user', 'add', bob.username], env, io)).toBe(0);
    provider.redirectUri = `${stack.issuer}/connect/callback`;
    const b = await mcpAccessToken(stack.issuer, bob, VAULT_MCP);
    const first = await exchange(stack.issuer, VAULT_CLIENT, b.accessToken);
    await completeConnect(String(first.body.connect_uri), b.ua, { providerUser: ALICE_DRIVE, provider });
    expect(await connectionsOf(stack.as.server.store, bob.username)).toEqual(['drive']);
    const out: string[] = [];
    expect(await runAdmin(['user', 'disable', bob.username], env, { ...io, out: (l) => out.push(l) })).toBe(0);
    expect(out.join('\n')).toMatch(/deleted 1 third-party connection/);
    expect(await connectionsOf(stack.as.server.store, bob.username)).toEqual([]);
    refused(await exchange(stack.issuer, VAULT_CLIENT, b.accessToken), 'invalid_grant');
  });
});
