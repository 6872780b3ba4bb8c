/**
 * The admin service (issue 44) over a real AS on loopback: what the console and the admin tool
 * see and change. RFC 7662 §2.2 (a disabled account's tokens are inactive at introspection), RFC
 * 7009 (revocation reaches the grant's tokens), and no secret in any answer of the service.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Actor, AdminServiceError, createAdminService, type AdminService } from '../src/index.js';
import { openStore, type Store } from '../src/storage/index.js';
import { CONFIDENTIAL_WEB_CLIENT, RESOURCE, registerClient, startAs, tokenRequest, type RunningAs } from './helpers/as.js';
import { authorizeAuto, codeGrant } from './helpers/flow.js';

const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;
const OPERATOR: Actor = { sub: 'operator-sub-1', via: 'console' };

async function introspect(base: string, token: string, auth: string): Promise<boolean> {
  const res = await fetch(`${base}/token/introspection`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: auth },
    body: new URLSearchParams({ token }),
  });
  return ((await res.json()) as { active: boolean }).active;
}

describe('admin service over a running AS', () => {
  let t: RunningAs;
  let store: Store;
  let service: AdminService;
  const revokedGrants: string[] = [];
  const secrets: string[] = [];
  let client: { id: string; auth: string };
  let aliceId: string;

  /** A code flow through the real endpoints: the remembered grant, an access and a refresh token. */
  async function signIn() {
    const flow = await authorizeAuto(t.url, client.id);
    const tokens = await tokenRequest(t.url, codeGrant(client.id, flow, { client_id: undefined }), { authorization: client.auth });
    expect(tokens.status, JSON.stringify(tokens.body)).toBe(200);
    secrets.push(tokens.body.access_token, tokens.body.refresh_token);
    return tokens.body as { access_token: string; refresh_token: string };
  }

  beforeAll(async () => {
    store = await openStore({ kind: 'memory' }, { cleanupIntervalSeconds: 0, onGrantRevoked: (id) => void revokedGrants.push(id) });
    t = await startAs({
      devAutoLogin: 'alice',
      storage: store,
      clients: [{ client_id: 'configured-app', redirect_uris: ['https://configured.example/cb'], token_endpoint_auth_method: 'none' }],
    });
    const reg = (await registerClient(t.url, { ...CONFIDENTIAL_WEB_CLIENT, client_name: 'Notes <b>App</b>' })).body;
    client = { id: reg.client_id, auth: basic(reg.client_id, reg.client_secret) };
    secrets.push(reg.client_secret, reg.registration_access_token);
    aliceId = (await store.accounts.findByUsername('alice'))!.id;
    secrets.push((await store.accounts.findById(aliceId))!.passwordHash!);
    service = createAdminService({
      store,
      configuredClients: [{ client_id: 'configured-app', redirect_uris: ['https://configured.example/cb'] }],
    });
  });
  afterAll(async () => {
    await t?.close();
    await store?.close();
  });

  it('lists every client with its origin, redirect URIs, grant types and last use (from the audit log kept in the store)', async () => {
    await signIn();
    const clients = await service.listClients();
    const dcr = clients.find((c) => c.clientId === client.id)!;
    expect(dcr).toMatchObject({
      origin: 'dcr',
      clientName: 'Notes <b>App</b>',
      redirectUris: ['http://127.0.0.1:7777/callback'],
      disabled: false,
    });
    expect(dcr.grantTypes).toContain('authorization_code');
    expect(dcr.createdAt).toBeTypeOf('number');
    expect(dcr.lastUsedAt).toBeTypeOf('number');
    expect(clients.find((c) => c.clientId === 'configured-app')).toMatchObject({
      origin: 'configured',
      redirectUris: ['https://configured.example/cb'],
    });
    expect(await service.getClient('no-such-client')).toBeUndefined();
  });

  it('lists grants by user, client and resource', async () => {
    const byUser = await service.listGrants({ accountId: aliceId });
    expect(byUser.map((g) => [g.username, g.clientId])).toEqual([['alice', client.id]]);
    expect(byUser[0]!.resources[RESOURCE]).toEqual(['notes:read']);
    expect(await service.listGrants({ clientId: client.id })).toHaveLength(1);
    expect(await service.listGrants({ resource: RESOURCE })).toHaveLength(1);
    expect(await service.listGrants({ resource: 'https://other.example/mcp' })).toEqual([]);
  });

  it('revokeGrant has the CLI reach: the refresh token is inactive, the revocation signal hears the grant, the change is audited', async () => {
    const tokens = await signIn();
    expect(await introspect(t.url, tokens.refresh_token, client.auth)).toBe(true);
    const before = revokedGrants.length;
    expect(await service.revokeGrant(OPERATOR, aliceId, client.id)).toBe(true);
    expect(await introspect(t.url, tokens.refresh_token, client.auth)).toBe(false);
    expect(revokedGrants.length).toBeGreaterThan(before);
    expect(await service.revokeGrant(OPERATOR, aliceId, client.id)).toBe(false);
    const [event] = await service.searchAudit({ event: 'grant.revoked', actor: OPERATOR.sub });
    expect(event).toMatchObject({ accountId: aliceId, clientId: client.id, actor: OPERATOR.sub, fields: { via: 'console' } });
  });

  it('RFC 7662 §2.2: disabling a user makes its access token inactive at introspection, revokes its grants (signal) and is audited', async () => {
    const tokens = await signIn();
    expect(await introspect(t.url, tokens.access_token, client.auth)).toBe(true);
    const before = revokedGrants.length;
    const done = await service.setUserDisabled(OPERATOR, aliceId, true);
    expect(done.user.disabled).toBe(true);
    expect(done.revokedGrants).toEqual([client.id]);
    expect(revokedGrants.length).toBeGreaterThan(before);
    expect(await introspect(t.url, tokens.access_token, client.auth)).toBe(false);
    expect(await introspect(t.url, tokens.refresh_token, client.auth)).toBe(false);
    expect((await service.searchAudit({ event: 'account.disabled' }))[0]).toMatchObject({ accountId: aliceId, actor: OPERATOR.sub });
    // re-enabling revives no token
    await service.setUserDisabled(OPERATOR, aliceId, false);
    expect(await introspect(t.url, tokens.refresh_token, client.auth)).toBe(false);
  });

  it('users: create (checked like the admin tool), search, admin role, link identities; refusals carry codes', async () => {
    const bob = await service.createUser(OPERATOR, { username: 'bob', password: 'bob-password-1', displayName: 'Bob B' });
    expect(bob).toMatchObject({ username: 'bob', admin: false, hasPassword: true, disabled: false });
    await expect(service.createUser(OPERATOR, { username: 'BOB', password: 'another-pass' })).rejects.toMatchObject({ error: 'conflict' });
    await expect(service.createUser(OPERATOR, { username: 'bad\u0007name', password: 'another-pass' })).rejects.toMatchObject({
      error: 'invalid_request',
    });
    await expect(service.createUser(OPERATOR, { username: 'carol', password: 'short' })).rejects.toBeInstanceOf(AdminServiceError);
    expect((await service.listUsers('bob b')).map((u) => u.username)).toEqual(['bob']);
    expect((await service.setUserAdmin(OPERATOR, bob.id, true)).admin).toBe(true);
    expect((await service.getUser('bob'))?.admin).toBe(true);
    const linked = await service.linkIdentity(OPERATOR, bob.id, 'https://idp.example', 'bob-1');
    expect(linked.linkedIdentities).toEqual(['https://idp.example bob-1']);
    await expect(service.linkIdentity(OPERATOR, aliceId, 'https://idp.example', 'bob-1')).rejects.toMatchObject({ error: 'conflict' });
    expect((await service.unlinkIdentity(OPERATOR, bob.id, 'https://idp.example', 'bob-1')).linkedIdentities).toEqual([]);
    await expect(service.setUserAdmin(OPERATOR, 'nobody', true)).rejects.toMatchObject({ error: 'not_found' });
    expect(await service.userConnections(bob.id)).toEqual([]);
    const events = (await service.searchAudit({ accountId: bob.id })).map((e) => e.event);
    expect(events).toContain('account.created');
    expect(events).toContain('account.updated');
  });

  it('keys: list and rotate (a retirement shorter than the longest token lifetime is refused); cookie keys by count only', async () => {
    const keys = await service.listSigningKeys();
    expect(keys.some((k) => k.status === 'current')).toBe(true);
    await expect(service.rotateSigningKeys(OPERATOR, 10)).rejects.toMatchObject({ error: 'invalid_request' });
    const rotated = await service.rotateSigningKeys(OPERATOR);
    expect(rotated.find((k) => k.status === 'current')?.kid).not.toBe(keys.find((k) => k.status === 'current')?.kid);
    const { count } = await service.cookieKeys();
    expect((await service.rotateCookieKeys(OPERATOR)).count).toBeGreaterThanOrEqual(count);
    expect((await service.searchAudit({ event: 'keys.rotated' })).map((e) => e.fields.kind)).toEqual(['cookie', 'signing']);
  });

  it('CIMD: the policy is stored with the operator; approve and deny by client id URL; a non-URL is refused', async () => {
    const policy = await service.setCimdPolicy(OPERATOR, {
      allowedHosts: ['trusted.example'],
      deniedHosts: ['evil.example'],
      approvalRequired: true,
    });
    expect(policy).toMatchObject({ approvalRequired: true, updatedBy: OPERATOR.sub });
    await expect(
      service.setCimdPolicy(OPERATOR, { allowedHosts: ['not a host'], deniedHosts: [], approvalRequired: true }),
    ).rejects.toMatchObject({
      error: 'invalid_request',
    });
    const approved = await service.decideCimdClient(OPERATOR, 'https://apps.example/client.json', 'approved');
    expect(approved).toMatchObject({ host: 'apps.example', status: 'approved', decidedBy: OPERATOR.sub });
    await expect(service.decideCimdClient(OPERATOR, 'not-a-url', 'approved')).rejects.toMatchObject({ error: 'invalid_request' });
    expect((await service.listCimdClients('approved')).map((c) => c.clientId)).toEqual(['https://apps.example/client.json']);
    expect((await service.listClients()).find((c) => c.clientId === 'https://apps.example/client.json')).toMatchObject({
      origin: 'cimd',
      host: 'apps.example',
      approval: 'approved',
    });
  });

  it('clients: disable revokes grants and marks it; configured clients are not deleted here; a DCR client is deleted', async () => {
    await signIn();
    const disabled = await service.setClientDisabled(OPERATOR, client.id, true);
    expect(disabled.disabled).toBe(true);
    expect(await service.listGrants({ clientId: client.id })).toEqual([]);
    expect((await service.setClientDisabled(OPERATOR, client.id, false)).disabled).toBe(false);
    await expect(service.deleteClient(OPERATOR, 'configured-app')).rejects.toMatchObject({ error: 'invalid_request' });
    await service.deleteClient(OPERATOR, client.id);
    expect(await service.getClient(client.id)).toBeUndefined();
    await expect(service.deleteClient(OPERATOR, client.id)).rejects.toMatchObject({ error: 'not_found' });
    expect((await service.searchAudit({ clientId: client.id, event: 'client.deleted' }))[0]?.actor).toBe(OPERATOR.sub);
  });

  it('no answer of the service carries a secret (client secret, registration token, tokens, password hash, key material)', async () => {
    const answers = JSON.stringify([
      await service.listClients(),
      await service.listUsers(),
      await service.listGrants({}),
      await service.listSigningKeys(),
      await service.cookieKeys(),
      await service.searchAudit({ limit: 1000 }),
    ]);
    for (const secret of secrets) expect(answers).not.toContain(secret);
    expect(answers).not.toMatch(/"(d|p|q|dp|dq|qi)":/);
    expect(answers).not.toContain('passwordHash');
    for (const key of await store.keys.cookieKeys()) expect(answers).not.toContain(key);
  });
});
