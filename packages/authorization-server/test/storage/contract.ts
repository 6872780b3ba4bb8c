/**
 * The storage contract, written once and run against every implementation
 * (memory, SQLite, PostgreSQL) by `contract.test.ts`.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { decodeProtectedHeader, importJWK, jwtVerify, SignJWT } from 'jose';
import type { AdapterPayload } from 'oidc-provider';
import type { Store } from '../../src/storage/index.js';
import { StorageError } from '../../src/storage/index.js';
import type { OpenStoreOptions } from '../../src/storage/assemble.js';

export class TestClock {
  ms = Date.UTC(2026, 0, 1);
  readonly now = (): number => this.ms;
  advance(seconds: number): void {
    this.ms += seconds * 1000;
  }
  get seconds(): number {
    return Math.floor(this.ms / 1000);
  }
}

export interface ContractTarget {
  name: string;
  /** Opens a store on this target's (shared, per-suite) storage. */
  open(options: OpenStoreOptions): Promise<Store>;
  /** Wipes the target's storage between tests (fresh state for each test). */
  reset(): Promise<void>;
  /** Whether a second `open` sees what the first one wrote (false for memory). */
  durable: boolean;
}

const GRANT_MODELS = ['AccessToken', 'AuthorizationCode', 'RefreshToken', 'DeviceCode', 'BackchannelAuthenticationRequest'] as const;

export function storeContract(target: ContractTarget): void {
  describe(`storage contract: ${target.name}`, () => {
    let clock: TestClock;
    let store: Store;

    beforeEach(async () => {
      await target.reset();
      clock = new TestClock();
      store = await target.open({ clock: clock.now, cleanupIntervalSeconds: 0 });
    });
    afterEach(async () => {
      await store.close();
    });

    describe('oidc-provider adapter', () => {
      it('upsert then find returns the payload; unknown ids give undefined', async () => {
        const a = store.adapter('AccessToken');
        await a.upsert('at1', { jti: 'at1', kind: 'AccessToken', grantId: 'g1', scope: 'openid notes:read', extra: { n: 1 } }, 60);
        expect(await a.find('at1')).toEqual({
          jti: 'at1',
          kind: 'AccessToken',
          grantId: 'g1',
          scope: 'openid notes:read',
          extra: { n: 1 },
        });
        expect(await a.find('missing')).toBeUndefined();
      });

      it('upsert replaces the previous payload', async () => {
        const a = store.adapter('Grant');
        await a.upsert('g1', { jti: 'g1', kind: 'Grant', scope: 'a' }, 60);
        await a.upsert('g1', { jti: 'g1', kind: 'Grant', scope: 'b' }, 120);
        expect((await a.find('g1'))?.scope).toBe('b');
        clock.advance(100);
        expect(await a.find('g1'), 'the new expiry applies').toBeDefined();
      });

      it('models are separate namespaces: the same id in two models are two rows', async () => {
        await store.adapter('AccessToken').upsert('same', { jti: 'same', kind: 'AccessToken' }, 60);
        await store.adapter('RefreshToken').upsert('same', { jti: 'same', kind: 'RefreshToken' }, 60);
        await store.adapter('AccessToken').destroy('same');
        expect(await store.adapter('AccessToken').find('same')).toBeUndefined();
        expect((await store.adapter('RefreshToken').find('same'))?.kind).toBe('RefreshToken');
      });

      it('an expired row is never returned (find, findByUid, findByUserCode)', async () => {
        await store.adapter('AuthorizationCode').upsert('c1', { jti: 'c1', kind: 'AuthorizationCode' }, 60);
        await store.adapter('Session').upsert('s1', { jti: 's1', kind: 'Session', uid: 'u1' }, 60);
        await store.adapter('DeviceCode').upsert('d1', { jti: 'd1', kind: 'DeviceCode', userCode: 'ABCD-EFGH' }, 60);
        clock.advance(59);
        expect(await store.adapter('AuthorizationCode').find('c1')).toBeDefined();
        clock.advance(1);
        expect(await store.adapter('AuthorizationCode').find('c1')).toBeUndefined();
        expect(await store.adapter('Session').findByUid('u1')).toBeUndefined();
        expect(await store.adapter('DeviceCode').findByUserCode('ABCD-EFGH')).toBeUndefined();
      });

      it('a row upserted without expiresIn (Client) persists forever', async () => {
        // an `undefined` member, as oidc-provider's own objects can carry: the store drops it like JSON does
        const client = {
          client_id: 'c',
          client_secret: undefined,
          redirect_uris: ['http://127.0.0.1/cb'],
          token_endpoint_auth_method: 'none',
        } as unknown as AdapterPayload;
        await store.adapter('Client').upsert('c', client);
        clock.advance(20 * 365 * 24 * 3600);
        expect(await store.cleanup()).toBe(0);
        expect(await store.adapter('Client').find('c')).toEqual({
          client_id: 'c',
          redirect_uris: ['http://127.0.0.1/cb'],
          token_endpoint_auth_method: 'none',
        });
      });

      it('findByUid finds a Session by uid and follows re-indexing on upsert', async () => {
        const s = store.adapter('Session');
        await s.upsert('s1', { jti: 's1', kind: 'Session', uid: 'uid-1', accountId: 'acc' }, 600);
        expect((await s.findByUid('uid-1'))?.accountId).toBe('acc');
        await s.upsert('s1', { jti: 's1', kind: 'Session', uid: 'uid-2', accountId: 'acc' }, 600);
        expect(await s.findByUid('uid-1')).toBeUndefined();
        expect((await s.findByUid('uid-2'))?.jti).toBe('s1');
        expect(await store.adapter('Interaction').findByUid('uid-2'), 'lookups stay within the model').toBeUndefined();
        await s.destroy('s1');
        expect(await s.findByUid('uid-2')).toBeUndefined();
      });

      it('findByUserCode finds a DeviceCode by user code', async () => {
        const d = store.adapter('DeviceCode');
        await d.upsert('d1', { jti: 'd1', kind: 'DeviceCode', userCode: 'WDJB-MJHT', grantId: 'g' }, 600);
        expect((await d.findByUserCode('WDJB-MJHT'))?.jti).toBe('d1');
        expect(await d.findByUserCode('XXXX-XXXX')).toBeUndefined();
      });

      it('consume sets payload.consumed to the epoch seconds and keeps the rest', async () => {
        const c = store.adapter('AuthorizationCode');
        await c.upsert('code', { jti: 'code', kind: 'AuthorizationCode', grantId: 'g', codeChallenge: 'x' }, 60);
        expect((await c.find('code'))?.consumed).toBeUndefined();
        clock.advance(5);
        await c.consume('code');
        const found = await c.find('code');
        expect(found?.consumed).toBe(clock.seconds);
        expect(found?.codeChallenge).toBe('x');
        // A code gone between the token request's read and its consume must not yield tokens.
        await expect(c.consume('missing')).rejects.toMatchObject({ error: 'invalid_grant' });
        await expect(store.adapter('RefreshToken').consume('missing')).resolves.toBeUndefined();
      });

      it('RFC 6749 §4.1.2: a second consume of a code is refused as invalid_grant, keeps the first stamp and revokes the grant', async () => {
        const c = store.adapter('AuthorizationCode');
        const g = store.adapter('Grant');
        const rt = store.adapter('RefreshToken');
        await g.upsert('g', { jti: 'g', kind: 'Grant' }, 600);
        await rt.upsert('rt', { jti: 'rt', kind: 'RefreshToken', grantId: 'g' }, 600);
        await c.upsert('code', { jti: 'code', kind: 'AuthorizationCode', grantId: 'g' }, 60);
        const first = clock.seconds;
        await c.consume('code');
        expect((await c.find('code'))?.consumed).toBe(first);
        clock.advance(3);
        const second = c.consume('code');
        await expect(second).rejects.toMatchObject({ error: 'invalid_grant', statusCode: 400 });
        expect(await rt.find('rt')).toBeUndefined();
        expect(await g.find('g')).toBeUndefined();
      });

      it('consume works on payloads with \\u0000, lone surrogates and a nested "consumed" key', async () => {
        const c = store.adapter('AuthorizationCode');
        // `claims` shaped to put a nested "consumed" member in the stored text (not a valid claims request)
        const payload = {
          jti: 'odd',
          kind: 'AuthorizationCode',
          grantId: 'g3',
          nonce: 'a\u0000b\ud800',
          claims: { userinfo: { consumed: 1 } },
        } as unknown as AdapterPayload;
        await c.upsert('odd', payload, 60);
        await c.consume('odd');
        expect(await c.find('odd')).toEqual({ ...payload, consumed: clock.seconds });
        await expect(c.consume('odd')).rejects.toMatchObject({ error: 'invalid_grant' });
      });

      it('RFC 6749 §4.1.2: concurrent consumes of one code: exactly one succeeds', async () => {
        const c = store.adapter('AuthorizationCode');
        await c.upsert('code', { jti: 'code', kind: 'AuthorizationCode', grantId: 'g2' }, 60);
        const results = await Promise.allSettled(Array.from({ length: 5 }, () => c.consume('code')));
        expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
        expect(results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason.error)).toEqual(
          Array(4).fill('invalid_grant'),
        );
      });

      it('consume of a refresh token twice keeps the first stamp and does not throw (grace window decides)', async () => {
        const r = store.adapter('RefreshToken');
        await r.upsert('rt', { jti: 'rt', kind: 'RefreshToken', grantId: 'g' }, 60);
        const first = clock.seconds;
        await r.consume('rt');
        clock.advance(3);
        await expect(r.consume('rt')).resolves.toBeUndefined();
        expect((await r.find('rt'))?.consumed).toBe(first);
      });

      it('consume keeps the expiry of the row', async () => {
        const c = store.adapter('AuthorizationCode');
        await c.upsert('code', { jti: 'code', kind: 'AuthorizationCode' }, 60);
        await c.consume('code');
        clock.advance(60);
        expect(await c.find('code')).toBeUndefined();
      });

      it('destroy deletes the row; destroying a missing row is fine', async () => {
        const r = store.adapter('RefreshToken');
        await r.upsert('rt', { jti: 'rt', kind: 'RefreshToken', grantId: 'g' }, 600);
        await r.destroy('rt');
        expect(await r.find('rt')).toBeUndefined();
        await expect(r.destroy('rt')).resolves.toBeUndefined();
      });

      it('revokeByGrantId deletes every token row of the grant in every model, nothing else', async () => {
        for (const model of GRANT_MODELS) {
          await store.adapter(model).upsert(`${model}-g1`, { jti: `${model}-g1`, kind: model, grantId: 'g1' }, 600);
          await store.adapter(model).upsert(`${model}-g2`, { jti: `${model}-g2`, kind: model, grantId: 'g2' }, 600);
        }
        await store.adapter('Grant').upsert('g1', { jti: 'g1', kind: 'Grant' }, 600);
        await store.adapter('Client').upsert('client', { client_id: 'client' });

        await store.adapter('AccessToken').revokeByGrantId('g1');

        for (const model of GRANT_MODELS) {
          expect(await store.adapter(model).find(`${model}-g1`), `${model} of g1`).toBeUndefined();
          expect(await store.adapter(model).find(`${model}-g2`), `${model} of g2`).toBeDefined();
        }
        // oidc-provider destroys the Grant itself through Grant.adapter.destroy.
        expect(await store.adapter('Grant').find('g1')).toBeDefined();
        expect(await store.adapter('Client').find('client')).toBeDefined();
      });

      it('revokeByGrantId leaves refresh tokens whose grantId changed on upsert', async () => {
        const r = store.adapter('RefreshToken');
        await r.upsert('rt', { jti: 'rt', kind: 'RefreshToken', grantId: 'old' }, 600);
        await r.upsert('rt', { jti: 'rt', kind: 'RefreshToken', grantId: 'new' }, 600);
        await r.revokeByGrantId('old');
        expect(await r.find('rt')).toBeDefined();
        await r.revokeByGrantId('new');
        expect(await r.find('rt')).toBeUndefined();
      });

      it('payloads keep unicode and nested structures exactly', async () => {
        const payload = {
          jti: 'i',
          kind: 'Interaction',
          params: { scope: 'openid', nested: [1, { a: 'é😀' }] },
          uid: 'i',
          returnTo: 'http://127.0.0.1/x?y=1',
        };
        await store.adapter('Interaction').upsert('i', payload, 60);
        expect(await store.adapter('Interaction').find('i')).toEqual(payload);
      });
    });

    describe('signing keys', () => {
      it('first use generates a current ES256 signer and a published next key, each a private JWK with kid/alg/use', async () => {
        const keys = await store.keys.signingKeys();
        expect(keys.map((k) => k.status)).toEqual(['current', 'next']);
        for (const k of keys) {
          expect(k.jwk).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
          expect(typeof k.jwk.d).toBe('string');
          expect(typeof k.jwk.kid).toBe('string');
          expect(k.createdAt).toBe(clock.seconds);
        }
        expect(keys[0]!.jwk.kid).not.toBe(keys[1]!.jwk.kid);
      });

      it('keys are stable across calls and usable for signing', async () => {
        const first = await store.keys.signingKeys();
        const second = await store.keys.signingKeys();
        expect(second.map((k) => k.jwk.kid)).toEqual(first.map((k) => k.jwk.kid));
        const signer = first[0]!.jwk;
        const jwt = await new SignJWT({ sub: 'x' })
          .setProtectedHeader({ alg: 'ES256', kid: signer.kid! })
          .sign(await importJWK(signer, 'ES256'));
        expect(decodeProtectedHeader(jwt).kid).toBe(signer.kid);
        const { d: _d, ...publicJwk } = signer;
        await expect(jwtVerify(jwt, await importJWK(publicJwk, 'ES256'))).resolves.toBeDefined();
      });

      it('rotation is publish-before-use: next → current, current → retired until now + retireAfter, fresh next', async () => {
        const [current, next] = await store.keys.signingKeys();
        clock.advance(10);
        const rotated = await store.keys.rotateSigningKeys(3600);
        expect(rotated.map((k) => k.status)).toEqual(['current', 'next', 'retired']);
        expect(rotated[0]!.jwk.kid).toBe(next!.jwk.kid);
        expect(rotated[2]!.jwk.kid).toBe(current!.jwk.kid);
        expect(rotated[2]!.retireAfter).toBe(clock.seconds + 3600);
        expect([current!.jwk.kid, next!.jwk.kid]).not.toContain(rotated[1]!.jwk.kid);
        expect((await store.keys.signingKeys()).map((k) => k.jwk.kid)).toEqual(rotated.map((k) => k.jwk.kid));
      });

      it('order is current, next, then retired newest first; retired keys past retireAfter are dropped', async () => {
        const k0 = await store.keys.signingKeys();
        const r1 = await store.keys.rotateSigningKeys(100);
        clock.advance(50);
        const r2 = await store.keys.rotateSigningKeys(100);
        expect(r2.map((k) => k.status)).toEqual(['current', 'next', 'retired', 'retired']);
        expect(r2.slice(2).map((k) => k.jwk.kid)).toEqual([r1[0]!.jwk.kid, k0[0]!.jwk.kid]);
        clock.advance(51);
        const later = await store.keys.signingKeys();
        expect(later.map((k) => k.jwk.kid)).toEqual(r2.slice(0, 3).map((k) => k.jwk.kid));
        expect(await store.cleanup()).toBeGreaterThanOrEqual(1);
        clock.advance(100);
        const r3 = await store.keys.rotateSigningKeys(10);
        expect(r3.map((k) => k.status)).toEqual(['current', 'next', 'retired']);
      });

      it('rotation refuses a negative retirement period', async () => {
        await expect(store.keys.rotateSigningKeys(-1)).rejects.toThrow(RangeError);
      });
    });

    describe('cookie keys', () => {
      it('first use generates one random 32-byte base64url key, stable across calls', async () => {
        const keys = await store.keys.cookieKeys();
        expect(keys).toHaveLength(1);
        expect(keys[0]).toMatch(/^[A-Za-z0-9_-]{43}$/);
        expect(Buffer.from(keys[0]!, 'base64url')).toHaveLength(32);
        expect(await store.keys.cookieKeys()).toEqual(keys);
      });

      it('rotation puts a new key first and keeps the older ones (up to 3) for verification', async () => {
        const [k1] = await store.keys.cookieKeys();
        const r1 = await store.keys.rotateCookieKeys();
        expect(r1).toHaveLength(2);
        expect(r1[1]).toBe(k1);
        const r2 = await store.keys.rotateCookieKeys();
        const r3 = await store.keys.rotateCookieKeys();
        expect(r3).toEqual([r3[0], r2[0], r1[0]]);
        expect(new Set(r3).size).toBe(3);
        expect(await store.keys.cookieKeys()).toEqual(r3);
      });
    });

    describe('accounts', () => {
      const base = { passwordHash: 'scrypt$x', disabled: false };

      it('create, findById, findByUsername (case-insensitive), list', async () => {
        const created = await store.accounts.create({ id: 'a1', username: 'Alice', ...base, displayName: 'Alice A.' });
        expect(created).toMatchObject({
          id: 'a1',
          username: 'Alice',
          displayName: 'Alice A.',
          createdAt: clock.seconds,
          updatedAt: clock.seconds,
        });
        expect(await store.accounts.findById('a1')).toEqual(created);
        expect((await store.accounts.findByUsername('alice'))?.id).toBe('a1');
        expect((await store.accounts.findByUsername('ALICE'))?.id).toBe('a1');
        expect(await store.accounts.findByUsername('bob')).toBeUndefined();
        expect(await store.accounts.findById('nope')).toBeUndefined();
        await store.accounts.create({ id: 'a2', username: 'bob', passwordHash: null, disabled: true });
        expect((await store.accounts.list()).map((a) => a.id)).toEqual(['a1', 'a2']);
      });

      it('usernames are unique case-insensitively (a second "ALICE" is refused)', async () => {
        await store.accounts.create({ id: 'a1', username: 'alice', ...base });
        await expect(store.accounts.create({ id: 'a2', username: 'ALICE', ...base })).rejects.toMatchObject({ code: 'conflict' });
        await expect(store.accounts.create({ id: 'a1', username: 'other', ...base })).rejects.toBeInstanceOf(StorageError);
        expect(await store.accounts.list()).toHaveLength(1);
      });

      it('lookup by upstream identity; an identity belongs to one account only', async () => {
        await store.accounts.create({ id: 'a1', username: 'alice', ...base, upstreamIdentities: ['https://idp.example alice-sub'] });
        expect((await store.accounts.findByUpstreamIdentity('https://idp.example', 'alice-sub'))?.id).toBe('a1');
        expect(await store.accounts.findByUpstreamIdentity('https://idp.example', 'other')).toBeUndefined();
        expect(await store.accounts.findByUpstreamIdentity('https://evil.example', 'alice-sub')).toBeUndefined();
        await expect(
          store.accounts.create({ id: 'a2', username: 'mallory', ...base, upstreamIdentities: ['https://idp.example alice-sub'] }),
        ).rejects.toMatchObject({ code: 'conflict' });
      });

      it('update patches fields, keeps createdAt, refreshes updatedAt, re-indexes username and identities', async () => {
        await store.accounts.create({ id: 'a1', username: 'alice', ...base });
        await store.accounts.create({ id: 'a2', username: 'bob', ...base });
        clock.advance(30);
        const updated = await store.accounts.update('a1', { username: 'Alicia', disabled: true, upstreamIdentities: ['iss sub'] });
        expect(updated).toMatchObject({
          id: 'a1',
          username: 'Alicia',
          disabled: true,
          passwordHash: 'scrypt$x',
          createdAt: clock.seconds - 30,
          updatedAt: clock.seconds,
        });
        expect(await store.accounts.findByUsername('alice')).toBeUndefined();
        expect((await store.accounts.findByUsername('ALICIA'))?.id).toBe('a1');
        expect((await store.accounts.findByUpstreamIdentity('iss', 'sub'))?.id).toBe('a1');
        await expect(store.accounts.update('a2', { username: 'alicia' })).rejects.toMatchObject({ code: 'conflict' });
        await expect(store.accounts.update('missing', { disabled: true })).rejects.toMatchObject({ code: 'not_found' });
        expect((await store.accounts.findById('a2'))?.username).toBe('bob');
      });

      // One canonical identity (identityKey of @mcp-auth-kit/protocol: UTS #15 NFKC, then lower case).
      it('lookup and uniqueness use the canonical key: lookalikes find the account and cannot be a second one', async () => {
        await store.accounts.create({ id: 'a1', username: 'bob', ...base });
        for (const spelling of ['bob', 'BOB', '𝖇𝖔𝖇', 'ｂｏｂ', '𝐁𝐨𝐛']) {
          expect((await store.accounts.findByUsername(spelling))?.id, spelling).toBe('a1');
        }
        await store.accounts.create({ id: 'a2', username: 'lee@acme.example', ...base });
        expect((await store.accounts.findByUsername('ｌｅｅ@ａｃｍｅ.example'))?.id).toBe('a2');
        await expect(store.accounts.create({ id: 'a3', username: 'Bob', ...base })).rejects.toMatchObject({ code: 'conflict' });
        expect(await store.accounts.list()).toHaveLength(2);
      });

      it('a name not in canonical display-safe form is refused at creation and rename (invalid_input)', async () => {
        const refused = [
          '𝖇𝖔𝖇',
          'ｌｅｅ@ａｃｍｅ.example',
          'alice\u200b',
          'ali\tce',
          'alice\nadmin',
          ' alice',
          'a'.repeat(100 * 1024),
          'pаypal',
        ];
        for (const [i, username] of refused.entries()) {
          await expect(
            store.accounts.create({ id: `bad-${i}`, username, ...base }),
            JSON.stringify(username.slice(0, 20)),
          ).rejects.toMatchObject({
            code: 'invalid_input',
          });
        }
        await store.accounts.create({ id: 'a1', username: 'alice', ...base });
        await expect(store.accounts.update('a1', { username: 'alice\u200b' })).rejects.toMatchObject({ code: 'invalid_input' });
        expect((await store.accounts.list()).map((a) => a.username)).toEqual(['alice']);
      });

      it('the source is stored, returned by every lookup, defaults to operator and is never changed by update', async () => {
        const upstream = 'upstream:https://idp.example';
        await store.accounts.create({ id: 'a1', username: 'alice', ...base });
        await store.accounts.create({
          id: 'a2',
          username: 'bob',
          ...base,
          upstreamIdentities: ['https://idp.example bob'],
          source: upstream,
        });
        await store.accounts.create({ id: 'a3', username: 'carol', ...base, source: 'id-jag:https://jag.example' });
        expect((await store.accounts.findById('a1'))?.source).toBe('operator');
        expect((await store.accounts.findByUsername('BOB'))?.source).toBe(upstream);
        expect((await store.accounts.findByUpstreamIdentity('https://idp.example', 'bob'))?.source).toBe(upstream);
        expect((await store.accounts.list()).map((a) => a.source)).toEqual(['operator', upstream, 'id-jag:https://jag.example']);
        const patch = { disabled: true, source: 'operator' } as Parameters<Store['accounts']['update']>[1];
        expect((await store.accounts.update('a2', patch)).source).toBe(upstream);
        expect((await store.accounts.findById('a2'))?.source).toBe(upstream);
        await expect(store.accounts.create({ id: 'a4', username: 'dave', ...base, source: 'someone' as 'operator' })).rejects.toMatchObject(
          { code: 'invalid_input' },
        );
      });
    });

    describe('kv', () => {
      it('set/get/delete with TTL', async () => {
        await store.kv.set('cimd', 'https://client.example/doc', { client_name: 'x' }, 30);
        expect(await store.kv.get('cimd', 'https://client.example/doc')).toEqual({ client_name: 'x' });
        expect(await store.kv.get('other-ns', 'https://client.example/doc')).toBeUndefined();
        clock.advance(30);
        expect(await store.kv.get('cimd', 'https://client.example/doc')).toBeUndefined();
        await store.kv.set('cimd', 'k', 'v', 30);
        await store.kv.set('cimd', 'k', 'v2', 30);
        expect(await store.kv.get('cimd', 'k')).toBe('v2');
        await store.kv.delete('cimd', 'k');
        expect(await store.kv.get('cimd', 'k')).toBeUndefined();
      });

      it('list gives the live entries of one namespace with their expiry, and none of another', async () => {
        await store.kv.set('revoked', 'g1', { at: 1 }, 30);
        await store.kv.set('revoked', 'g2', { at: 2 }, 90);
        await store.kv.set('revoked-not', 'g3', { at: 3 }, 90);
        await store.kv.set('other', 'revoked', 1, 90);
        const now = clock.now();
        const listed = (await store.kv.list('revoked')).sort((a, b) => a.key.localeCompare(b.key));
        expect(listed).toEqual([
          { key: 'g1', value: { at: 1 }, expiresAt: now + 30_000 },
          { key: 'g2', value: { at: 2 }, expiresAt: now + 90_000 },
        ]);
        clock.advance(30);
        expect((await store.kv.list('revoked')).map((e) => e.key)).toEqual(['g2']);
        expect(await store.kv.list('empty')).toEqual([]);
      });

      it('increment counts from `by` and expires ttl after creation (not extended by later increments)', async () => {
        expect(await store.kv.increment('rate', 'ip', 1, 60)).toBe(1);
        clock.advance(30);
        expect(await store.kv.increment('rate', 'ip', 2, 60)).toBe(3);
        expect(await store.kv.get('rate', 'ip')).toBe(3);
        clock.advance(30);
        expect(await store.kv.get('rate', 'ip')).toBeUndefined();
        expect(await store.kv.increment('rate', 'ip', 1, 60), 'a new window starts').toBe(1);
      });

      it('refuses bad input the same way everywhere (invalid_input)', async () => {
        await expect(store.kv.set('ns', 'k', 1, 0)).rejects.toMatchObject({ code: 'invalid_input' });
        await expect(store.kv.set('ns', 'k', 1, Number.NaN)).rejects.toMatchObject({ code: 'invalid_input' });
        await expect(store.kv.set('ns', 'k', undefined, 10)).rejects.toMatchObject({ code: 'invalid_input' });
        await expect(store.kv.set('', 'k', 1, 10)).rejects.toMatchObject({ code: 'invalid_input' });
        await expect(store.kv.increment('ns', 'k', Number.POSITIVE_INFINITY, 10)).rejects.toMatchObject({ code: 'invalid_input' });
        await expect(store.kv.increment('ns', 'k', 1, -5)).rejects.toMatchObject({ code: 'invalid_input' });
        expect(await store.kv.get('ns', 'k')).toBeUndefined();
      });

      it('a non-numeric value under a counter key restarts the counter instead of failing', async () => {
        await store.kv.set('ns', 'k', { not: 'a number' }, 60);
        expect(await store.kv.increment('ns', 'k', 2, 60)).toBe(2);
        expect(await store.kv.increment('ns', 'k', 3, 60)).toBe(5);
      });

      it('increment is atomic under concurrency: 40 parallel increments give 1..40', async () => {
        const results = await Promise.all(Array.from({ length: 40 }, () => store.kv.increment('lockout', 'alice', 1, 300)));
        expect([...results].sort((a, b) => a - b)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
        expect(await store.kv.get('lockout', 'alice')).toBe(40);
      });

      it('decrement takes back from a live counter, never below 0, keeping its window', async () => {
        expect(await store.kv.increment('rate', 'ip', 3, 60)).toBe(3);
        clock.advance(30);
        expect(await store.kv.decrement('rate', 'ip', 1)).toBe(2);
        expect(await store.kv.decrement('rate', 'ip', 5)).toBe(0);
        expect(await store.kv.increment('rate', 'ip', 1, 60)).toBe(1);
        clock.advance(30);
        expect(await store.kv.get('rate', 'ip'), 'the window still ends 60 s after creation').toBeUndefined();
      });

      it('decrement never creates a counter nor restarts an expired window (undefined instead)', async () => {
        expect(await store.kv.decrement('rate', 'absent', 1)).toBeUndefined();
        expect(await store.kv.get('rate', 'absent')).toBeUndefined();
        await store.kv.increment('rate', 'old', 2, 10);
        clock.advance(10);
        expect(await store.kv.decrement('rate', 'old', 1)).toBeUndefined();
        expect(await store.kv.increment('rate', 'old', 1, 10), 'a fresh window starts at `by`, not below it').toBe(1);
        await store.kv.set('ns', 'text', { not: 'a number' }, 60);
        expect(await store.kv.decrement('ns', 'text', 1)).toBeUndefined();
        expect(await store.kv.get('ns', 'text')).toEqual({ not: 'a number' });
        await expect(store.kv.decrement('ns', 'k', -1)).rejects.toMatchObject({ code: 'invalid_input' });
        await expect(store.kv.decrement('ns', 'k', Number.NaN)).rejects.toMatchObject({ code: 'invalid_input' });
      });

      it('increment and decrement interleaved under concurrency lose no update', async () => {
        await store.kv.increment('lockout', 'bob', 20, 300);
        await Promise.all(
          Array.from({ length: 40 }, (_, i) =>
            i % 2 ? store.kv.increment('lockout', 'bob', 1, 300) : store.kv.decrement('lockout', 'bob', 1),
          ),
        );
        expect(await store.kv.get('lockout', 'bob')).toBe(20);
      });
    });

    describe('cleanup and lifecycle', () => {
      it('cleanup deletes expired rows only and returns how many', async () => {
        await store.adapter('AccessToken').upsert('old', { jti: 'old', grantId: 'g' }, 10);
        await store.adapter('Session').upsert('old', { jti: 'old', uid: 'u' }, 10);
        await store.adapter('AccessToken').upsert('new', { jti: 'new', grantId: 'g' }, 1000);
        await store.adapter('Client').upsert('c', { client_id: 'c' });
        await store.kv.set('ns', 'old', 1, 10);
        await store.kv.set('ns', 'new', 1, 1000);
        clock.advance(11);
        expect(await store.cleanup()).toBe(3);
        expect(await store.cleanup()).toBe(0);
        expect(await store.adapter('AccessToken').find('new')).toBeDefined();
        expect(await store.adapter('Client').find('c')).toBeDefined();
        expect(await store.kv.get('ns', 'new')).toBe(1);
      });

      it('ping resolves while open; after close every operation rejects with a closed StorageError', async () => {
        await expect(store.ping()).resolves.toBeUndefined();
        await store.close();
        await expect(store.close()).resolves.toBeUndefined();
        await expect(store.ping()).rejects.toMatchObject({ code: 'closed' });
        await expect(store.adapter('Client').find('x')).rejects.toMatchObject({ code: 'closed' });
        await expect(store.kv.get('a', 'b')).rejects.toMatchObject({ code: 'closed' });
        await expect(store.accounts.list()).rejects.toMatchObject({ code: 'closed' });
        await expect(store.keys.signingKeys()).rejects.toMatchObject({ code: 'closed' });
        await expect(store.cleanup()).rejects.toMatchObject({ code: 'closed' });
      });

      it('the periodic clean-up runs while open and stops at close', async () => {
        await store.close();
        const runs: number[] = [];
        let firstRemoval!: () => void;
        const removed = new Promise<void>((resolve) => (firstRemoval = resolve));
        store = await target.open({
          clock: clock.now,
          cleanupIntervalSeconds: 0.05,
          onCleanup: (n) => {
            runs.push(n);
            if (n > 0) firstRemoval();
          },
        });
        await store.kv.set('ns', 'k', 1, 1);
        await store.adapter('AccessToken').upsert('t', { jti: 't' }, 1);
        clock.advance(2);
        await removed;
        expect(runs.reduce((a, b) => a + b, 0)).toBe(2);
        expect(await store.cleanup(), 'nothing left for a manual run').toBe(0);
        await store.close();
        const after = runs.length;
        await new Promise((r) => setTimeout(r, 200));
        expect(runs.length, 'no run after close').toBe(after);
      });
    });

    if (target.durable) {
      describe('persistence', () => {
        it('everything written survives close() and a fresh openStore', async () => {
          await store.adapter('Client').upsert('c', { client_id: 'c', redirect_uris: ['http://127.0.0.1/cb'] });
          await store.adapter('RefreshToken').upsert('rt', { jti: 'rt', grantId: 'g', kind: 'RefreshToken' }, 3600);
          await store.adapter('Session').upsert('s', { jti: 's', uid: 'u' }, 3600);
          await store.accounts.create({ id: 'a1', username: 'Alice', passwordHash: 'h', disabled: false, upstreamIdentities: ['i s'] });
          const keys = await store.keys.signingKeys();
          const cookies = await store.keys.rotateCookieKeys();
          await store.kv.set('ns', 'k', { v: 1 }, 3600);
          await store.close();

          store = await target.open({ clock: clock.now, cleanupIntervalSeconds: 0 });
          expect(await store.adapter('Client').find('c')).toEqual({ client_id: 'c', redirect_uris: ['http://127.0.0.1/cb'] });
          expect((await store.adapter('RefreshToken').find('rt'))?.grantId).toBe('g');
          expect((await store.adapter('Session').findByUid('u'))?.jti).toBe('s');
          expect((await store.accounts.findByUsername('alice'))?.id).toBe('a1');
          expect((await store.accounts.findByUpstreamIdentity('i', 's'))?.id).toBe('a1');
          expect((await store.accounts.findById('a1'))?.source).toBe('operator');
          expect(await store.keys.signingKeys()).toEqual(keys);
          expect(await store.keys.cookieKeys()).toEqual(cookies);
          expect(await store.kv.get('ns', 'k')).toEqual({ v: 1 });
        });

        it('two stores opened at once on the same storage agree on keys', async () => {
          await store.close();
          await target.reset();
          const [a, b] = await Promise.all([
            target.open({ clock: clock.now, cleanupIntervalSeconds: 0 }),
            target.open({ clock: clock.now, cleanupIntervalSeconds: 0 }),
          ]);
          try {
            const [ka, kb] = await Promise.all([a.keys.signingKeys(), b.keys.signingKeys()]);
            expect(ka.map((k) => k.jwk.kid)).toEqual(kb.map((k) => k.jwk.kid));
            const [ca, cb] = await Promise.all([a.keys.cookieKeys(), b.keys.cookieKeys()]);
            expect(ca).toEqual(cb);
            const counts = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).kv.increment('rate', 'shared', 1, 60)));
            expect([...counts].sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
            await a.adapter('AuthorizationCode').upsert('code', { jti: 'code', grantId: 'g' }, 60);
            await b.adapter('AuthorizationCode').consume('code');
            expect((await a.adapter('AuthorizationCode').find('code'))?.consumed).toBe(clock.seconds);
          } finally {
            await Promise.all([a.close(), b.close()]);
          }
          store = await target.open({ clock: clock.now, cleanupIntervalSeconds: 0 });
        });
      });
    }
  });
}
