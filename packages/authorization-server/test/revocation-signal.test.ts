/**
 * The revocation signal: every way a grant ends reaches `onGrantRevoked` (RFC 7009 revocation,
 * refresh-token reuse, authorization-code replay, the account page / admin tool), and the Redis
 * publisher writes the key (kept for the longest token lifetime) and publishes the grant id.
 */
import { randomBytes } from 'node:crypto';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { revocationChannel, revokedGrantKey } from '@mcp-auth-kit/protocol';
import { DEFAULT_ACCESS_TOKEN_TTL, revokeRememberedGrant } from '../src/index.js';
import { createRedisRevocationPublisher } from '../src/redis/index.js';
import { openStore } from '../src/storage/index.js';
import type { Store } from '../src/storage/types.js';
import { decodeJwt, registerClient, RESOURCE, startAs, tokenRequest, type RunningAs } from './helpers/as.js';
import { authorizeAuto, exchangeCode } from './helpers/flow.js';
import { shouldRunRedisTests, TEST_REDIS_URL } from '@mcp-auth-kit/test-utils';

describe('onGrantRevoked: every way a grant ends', () => {
  const revoked: string[] = [];
  let store: Store;
  let t: RunningAs;

  beforeAll(async () => {
    store = await openStore({ kind: 'memory' }, { onGrantRevoked: (grantId) => void revoked.push(grantId) });
    t = await startAs({ devAutoLogin: 'alice', storage: store, refreshTokens: { reuseGraceSeconds: 0 } });
  });
  afterAll(async () => {
    await t?.close();
    await store?.close();
  });

  const grantOf = (accessToken: string) => decodeJwt(accessToken).payload.grant_id as string;
  const tokens = async (clientId: string) => {
    const flow = await authorizeAuto(t.url, clientId);
    const res = await exchangeCode(t.url, clientId, flow);
    expect(res.status).toBe(200);
    return { flow, body: res.body as { access_token: string; refresh_token: string } };
  };

  it('RFC 7009 §2.1: revoking the refresh token ends the grant and signals it', async () => {
    const clientId = (await registerClient(t.url)).body.client_id as string;
    const { body } = await tokens(clientId);
    const res = await fetch(`${t.url}/token/revocation`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: body.refresh_token, client_id: clientId }),
    });
    expect(res.status).toBe(200);
    expect(revoked).toContain(grantOf(body.access_token));
  });

  it('OAuth 2.1 §4.3.1: a rotated refresh token presented again ends the grant and signals it', async () => {
    const clientId = (await registerClient(t.url)).body.client_id as string;
    const { body } = await tokens(clientId);
    const refresh = () =>
      tokenRequest(t.url, { grant_type: 'refresh_token', refresh_token: body.refresh_token, client_id: clientId, resource: RESOURCE });
    expect((await refresh()).status).toBe(200);
    expect((await refresh()).status).toBe(400);
    expect(revoked).toContain(grantOf(body.access_token));
  });

  it('RFC 6749 §4.1.2: a replayed authorization code ends the grant and signals it', async () => {
    const clientId = (await registerClient(t.url)).body.client_id as string;
    const { flow, body } = await tokens(clientId);
    const replay = await exchangeCode(t.url, clientId, flow);
    expect(replay.status).toBe(400);
    expect(revoked).toContain(grantOf(body.access_token));
  });

  it('a user (account page) or an operator (admin tool) withdrawing the approval signals it', async () => {
    const clientId = (await registerClient(t.url)).body.client_id as string;
    const { body } = await tokens(clientId);
    const account = await store.accounts.findByUsername('alice');
    expect(await revokeRememberedGrant(store, account!.id, clientId)).toBe(true);
    expect(revoked).toContain(grantOf(body.access_token));
  });

  it('a failing signal never fails the revocation (it goes to onError)', async () => {
    const errors: unknown[] = [];
    const failing = await openStore(
      { kind: 'memory' },
      {
        onGrantRevoked: async () => {
          throw new Error('redis down');
        },
        onError: (e) => void errors.push(e),
      },
    );
    await failing.adapter('Grant').upsert('g1', { accountId: 'a', clientId: 'c' } as never, 60);
    await failing.adapter('Grant').destroy('g1');
    expect(await failing.adapter('Grant').find('g1')).toBeUndefined();
    expect(errors).toHaveLength(1);
    await failing.close();
  });
});

const REDIS_URL = TEST_REDIS_URL;

describe.runIf(await shouldRunRedisTests())('createRedisRevocationPublisher (real Redis)', () => {
  it('writes the key with the token lifetime plus the clock-tolerance margin, then publishes the grant id', async () => {
    const prefix = `test-${randomBytes(6).toString('hex')}:`;
    const client = createClient({ url: REDIS_URL });
    client.on('error', () => {});
    await client.connect();
    const subscriber = client.duplicate();
    await subscriber.connect();
    const heard: string[] = [];
    await subscriber.subscribe(revocationChannel(prefix), (m) => void heard.push(m));
    try {
      const publish = createRedisRevocationPublisher({ client, prefix });
      await publish('grant-A1');
      await publish('not a grant id'); // ignored
      const ttl = await client.ttl(revokedGrantKey('grant-A1', prefix));
      expect(ttl).toBeGreaterThan(DEFAULT_ACCESS_TOKEN_TTL);
      expect(ttl).toBeLessThanOrEqual(DEFAULT_ACCESS_TOKEN_TTL + 300);
      for (let i = 0; i < 50 && heard.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
      expect(heard).toEqual(['grant-A1']);
      expect(await client.exists(revokedGrantKey('not a grant id', prefix))).toBe(0);
    } finally {
      await client.del(revokedGrantKey('grant-A1', prefix));
      subscriber.destroy();
      client.destroy();
    }
  });
});
