/** The contract of oidc-provider's adapter: models, expiry, lookups, single use, revocation by grant. */
import { describe, expect, it } from 'vitest';
import type { AdapterPayload } from 'oidc-provider';
import type { Opened } from '../contract.js';

const GRANT_MODELS = ['AccessToken', 'AuthorizationCode', 'RefreshToken', 'DeviceCode', 'BackchannelAuthenticationRequest'] as const;

export function modelsContract(opened: Opened): void {
  describe('oidc-provider adapter', () => {
    it('upsert then find returns the payload; unknown ids give undefined', async () => {
      const a = opened.store.adapter('AccessToken');
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
      const a = opened.store.adapter('Grant');
      await a.upsert('g1', { jti: 'g1', kind: 'Grant', scope: 'a' }, 60);
      await a.upsert('g1', { jti: 'g1', kind: 'Grant', scope: 'b' }, 120);
      expect((await a.find('g1'))?.scope).toBe('b');
      opened.clock.advance(100);
      expect(await a.find('g1'), 'the new expiry applies').toBeDefined();
    });

    it('models are separate namespaces: the same id in two models are two rows', async () => {
      await opened.store.adapter('AccessToken').upsert('same', { jti: 'same', kind: 'AccessToken' }, 60);
      await opened.store.adapter('RefreshToken').upsert('same', { jti: 'same', kind: 'RefreshToken' }, 60);
      await opened.store.adapter('AccessToken').destroy('same');
      expect(await opened.store.adapter('AccessToken').find('same')).toBeUndefined();
      expect((await opened.store.adapter('RefreshToken').find('same'))?.kind).toBe('RefreshToken');
    });

    it('an expired row is never returned (find, findByUid, findByUserCode)', async () => {
      await opened.store.adapter('AuthorizationCode').upsert('c1', { jti: 'c1', kind: 'AuthorizationCode' }, 60);
      await opened.store.adapter('Session').upsert('s1', { jti: 's1', kind: 'Session', uid: 'u1' }, 60);
      await opened.store.adapter('DeviceCode').upsert('d1', { jti: 'd1', kind: 'DeviceCode', userCode: 'ABCD-EFGH' }, 60);
      opened.clock.advance(59);
      expect(await opened.store.adapter('AuthorizationCode').find('c1')).toBeDefined();
      opened.clock.advance(1);
      expect(await opened.store.adapter('AuthorizationCode').find('c1')).toBeUndefined();
      expect(await opened.store.adapter('Session').findByUid('u1')).toBeUndefined();
      expect(await opened.store.adapter('DeviceCode').findByUserCode('ABCD-EFGH')).toBeUndefined();
    });

    it('a row upserted without expiresIn (Client) persists forever', async () => {
      // an `undefined` member, as oidc-provider's own objects can carry: the store drops it like JSON does
      const client = {
        client_id: 'c',
        client_secret: undefined,
        redirect_uris: ['http://127.0.0.1/cb'],
        token_endpoint_auth_method: 'none',
      } as unknown as AdapterPayload;
      await opened.store.adapter('Client').upsert('c', client);
      opened.clock.advance(20 * 365 * 24 * 3600);
      expect(await opened.store.cleanup()).toBe(0);
      expect(await opened.store.adapter('Client').find('c')).toEqual({
        client_id: 'c',
        redirect_uris: ['http://127.0.0.1/cb'],
        token_endpoint_auth_method: 'none',
      });
    });

    it('findByUid finds a Session by uid and follows re-indexing on upsert', async () => {
      const s = opened.store.adapter('Session');
      await s.upsert('s1', { jti: 's1', kind: 'Session', uid: 'uid-1', accountId: 'acc' }, 600);
      expect((await s.findByUid('uid-1'))?.accountId).toBe('acc');
      await s.upsert('s1', { jti: 's1', kind: 'Session', uid: 'uid-2', accountId: 'acc' }, 600);
      expect(await s.findByUid('uid-1')).toBeUndefined();
      expect((await s.findByUid('uid-2'))?.jti).toBe('s1');
      expect(await opened.store.adapter('Interaction').findByUid('uid-2'), 'lookups stay within the model').toBeUndefined();
      await s.destroy('s1');
      expect(await s.findByUid('uid-2')).toBeUndefined();
    });

    it('findByUserCode finds a DeviceCode by user code', async () => {
      const d = opened.store.adapter('DeviceCode');
      await d.upsert('d1', { jti: 'd1', kind: 'DeviceCode', userCode: 'WDJB-MJHT', grantId: 'g' }, 600);
      expect((await d.findByUserCode('WDJB-MJHT'))?.jti).toBe('d1');
      expect(await d.findByUserCode('XXXX-XXXX')).toBeUndefined();
    });

    it('consume sets payload.consumed to the epoch seconds and keeps the rest', async () => {
      const c = opened.store.adapter('AuthorizationCode');
      await c.upsert('code', { jti: 'code', kind: 'AuthorizationCode', grantId: 'g', codeChallenge: 'x' }, 60);
      expect((await c.find('code'))?.consumed).toBeUndefined();
      opened.clock.advance(5);
      await c.consume('code');
      const found = await c.find('code');
      expect(found?.consumed).toBe(opened.clock.seconds);
      expect(found?.codeChallenge).toBe('x');
      // A code gone between the token request's read and its consume must not yield tokens.
      await expect(c.consume('missing')).rejects.toMatchObject({ error: 'invalid_grant' });
      await expect(opened.store.adapter('RefreshToken').consume('missing')).rejects.toMatchObject({ error: 'invalid_grant' });
    });

    // A single-use token of a grant and a sibling token of that grant: after the replay the sibling
    // and the grant are gone (and the used token too where `usedGone`).
    it.each([
      {
        name: 'RFC 6749 §4.1.2: a second consume of a code is refused as invalid_grant, keeps the first stamp and revokes the grant',
        used: ['AuthorizationCode', 'code'],
        sibling: ['RefreshToken', 'rt'],
        usedGone: false,
      },
      {
        name: 'RFC 9700 §4.14.2: a second consume of a refresh token is refused as invalid_grant, keeps the first stamp and revokes the grant',
        used: ['RefreshToken', 'rt'],
        sibling: ['AccessToken', 'at'],
        usedGone: true,
      },
    ] as const)('$name', async ({ used: [usedModel, usedId], sibling: [siblingModel, siblingId], usedGone }) => {
      const grant = opened.store.adapter('Grant');
      const used = opened.store.adapter(usedModel);
      const sibling = opened.store.adapter(siblingModel);
      await grant.upsert('g', { jti: 'g', kind: 'Grant' }, 600);
      await sibling.upsert(siblingId, { jti: siblingId, kind: siblingModel, grantId: 'g' }, 600);
      await used.upsert(usedId, { jti: usedId, kind: usedModel, grantId: 'g' }, 60);
      const first = opened.clock.seconds;
      await used.consume(usedId);
      expect((await used.find(usedId))?.consumed).toBe(first);
      opened.clock.advance(3);
      await expect(used.consume(usedId)).rejects.toMatchObject({ error: 'invalid_grant', statusCode: 400 });
      if (usedGone) expect(await used.find(usedId)).toBeUndefined();
      expect(await sibling.find(siblingId)).toBeUndefined();
      expect(await grant.find('g')).toBeUndefined();
    });

    it('consume works on payloads with \\u0000, lone surrogates and a nested "consumed" key', async () => {
      const c = opened.store.adapter('AuthorizationCode');
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
      expect(await c.find('odd')).toEqual({ ...payload, consumed: opened.clock.seconds });
      await expect(c.consume('odd')).rejects.toMatchObject({ error: 'invalid_grant' });
    });

    it('RFC 6749 §4.1.2: concurrent consumes of one code: exactly one succeeds', async () => {
      const c = opened.store.adapter('AuthorizationCode');
      await c.upsert('code', { jti: 'code', kind: 'AuthorizationCode', grantId: 'g2' }, 60);
      const results = await Promise.allSettled(Array.from({ length: 5 }, () => c.consume('code')));
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      expect(results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason.error)).toEqual(
        Array(4).fill('invalid_grant'),
      );
    });

    /** A refresh at the token endpoint, as oidc-provider's `Provider.ctx` shows it to the adapter. */
    const refreshRequest = (value: string) => ({ oidc: { route: 'token', params: { grant_type: 'refresh_token', refresh_token: value } } });

    /** One refresh's rotation as oidc-provider does it: consume the old token, then save its successor. */
    const rotation = (old: string, next: string, grantId: string) =>
      opened.requests.run(refreshRequest(old), async () => {
        const r = opened.store.adapter('RefreshToken');
        await r.consume(old);
        await r.upsert(next, { jti: next, kind: 'RefreshToken', grantId }, 600);
        return next;
      });

    it('a refresh token rotation inside a refresh request stamps the old token and saves its successor', async () => {
      const r = opened.store.adapter('RefreshToken');
      await r.upsert('rt', { jti: 'rt', kind: 'RefreshToken', grantId: 'g' }, 600);
      await rotation('rt', 'rt-next', 'g');
      expect((await r.find('rt'))?.consumed).toBe(opened.clock.seconds);
      expect(await r.find('rt-next')).toEqual({ jti: 'rt-next', kind: 'RefreshToken', grantId: 'g' });
    });

    it('OAuth 2.1 §4.3.1, RFC 9700 §4.14.2: concurrent rotations of one refresh token: exactly one succeeds, the others are reuse and revoke the grant', async () => {
      const g = opened.store.adapter('Grant');
      const r = opened.store.adapter('RefreshToken');
      await g.upsert('g', { jti: 'g', kind: 'Grant' }, 600);
      await r.upsert('rt', { jti: 'rt', kind: 'RefreshToken', grantId: 'g' }, 600);
      const results = await Promise.allSettled(Array.from({ length: 6 }, (_, i) => rotation('rt', `rt-${i}`, 'g')));
      const won = results.filter((x) => x.status === 'fulfilled');
      expect(won).toHaveLength(1);
      expect(results.filter((x) => x.status === 'rejected').map((x) => (x as PromiseRejectedResult).reason.error)).toEqual(
        Array(5).fill('invalid_grant'),
      );
      // no second live chain: no loser saved a successor, and the winner's died with the grant
      for (let i = 0; i < 6; i++) expect(await r.find(`rt-${i}`)).toBeUndefined();
      expect(await r.find('rt')).toBeUndefined();
      expect(await g.find('g')).toBeUndefined();
    });

    it('rotations of different refresh tokens at once all succeed', async () => {
      const r = opened.store.adapter('RefreshToken');
      for (let i = 0; i < 6; i++) await r.upsert(`rt-${i}`, { jti: `rt-${i}`, kind: 'RefreshToken', grantId: `g-${i}` }, 600);
      await Promise.all(Array.from({ length: 6 }, (_, i) => rotation(`rt-${i}`, `rt-${i}-next`, `g-${i}`)));
      for (let i = 0; i < 6; i++) {
        expect((await r.find(`rt-${i}`))?.consumed).toBe(opened.clock.seconds);
        expect((await r.find(`rt-${i}-next`))?.grantId).toBe(`g-${i}`);
      }
    });

    it('a rotation of a refresh token that is gone (expired, revoked) saves no successor and fails', async () => {
      const r = opened.store.adapter('RefreshToken');
      await r.upsert('short', { jti: 'short', kind: 'RefreshToken', grantId: 'g' }, 5);
      opened.clock.advance(5);
      await expect(rotation('short', 'after-expired', 'g')).rejects.toMatchObject({ error: 'invalid_grant' });
      await expect(rotation('never-stored', 'after-missing', 'g')).rejects.toMatchObject({ error: 'invalid_grant' });
      expect(await r.find('after-expired')).toBeUndefined();
      expect(await r.find('after-missing')).toBeUndefined();
    });

    it('consume keeps the expiry of the row', async () => {
      const c = opened.store.adapter('AuthorizationCode');
      await c.upsert('code', { jti: 'code', kind: 'AuthorizationCode' }, 60);
      await c.consume('code');
      opened.clock.advance(60);
      expect(await c.find('code')).toBeUndefined();
    });

    it('destroy deletes the row; destroying a missing row is fine', async () => {
      const r = opened.store.adapter('RefreshToken');
      await r.upsert('rt', { jti: 'rt', kind: 'RefreshToken', grantId: 'g' }, 600);
      await r.destroy('rt');
      expect(await r.find('rt')).toBeUndefined();
      await expect(r.destroy('rt')).resolves.toBeUndefined();
    });

    it('revokeByGrantId deletes every token row of the grant in every model, nothing else', async () => {
      for (const model of GRANT_MODELS) {
        await opened.store.adapter(model).upsert(`${model}-g1`, { jti: `${model}-g1`, kind: model, grantId: 'g1' }, 600);
        await opened.store.adapter(model).upsert(`${model}-g2`, { jti: `${model}-g2`, kind: model, grantId: 'g2' }, 600);
      }
      await opened.store.adapter('Grant').upsert('g1', { jti: 'g1', kind: 'Grant' }, 600);
      await opened.store.adapter('Client').upsert('client', { client_id: 'client' });

      await opened.store.adapter('AccessToken').revokeByGrantId('g1');

      for (const model of GRANT_MODELS) {
        expect(await opened.store.adapter(model).find(`${model}-g1`), `${model} of g1`).toBeUndefined();
        expect(await opened.store.adapter(model).find(`${model}-g2`), `${model} of g2`).toBeDefined();
      }
      // oidc-provider destroys the Grant itself through Grant.adapter.destroy.
      expect(await opened.store.adapter('Grant').find('g1')).toBeDefined();
      expect(await opened.store.adapter('Client').find('client')).toBeDefined();
    });

    it('revokeByGrantId leaves refresh tokens whose grantId changed on upsert', async () => {
      const r = opened.store.adapter('RefreshToken');
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
      await opened.store.adapter('Interaction').upsert('i', payload, 60);
      expect(await opened.store.adapter('Interaction').find('i')).toEqual(payload);
    });
  });
}
