/** The contract of the key store: signing keys (publish-before-use rotation) and cookie keys. */
import { describe, expect, it } from 'vitest';
import { decodeProtectedHeader, importJWK, jwtVerify, SignJWT } from 'jose';
import type { Opened } from '../contract.js';

export function keysContract(opened: Opened): void {
  describe('signing keys', () => {
    it('first use generates a current ES256 signer and a published next key, each a private JWK with kid/alg/use', async () => {
      const keys = await opened.store.keys.signingKeys();
      expect(keys.map((k) => k.status)).toEqual(['current', 'next']);
      for (const k of keys) {
        expect(k.jwk).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
        expect(typeof k.jwk.d).toBe('string');
        expect(typeof k.jwk.kid).toBe('string');
        expect(k.createdAt).toBe(opened.clock.seconds);
      }
      expect(keys[0]!.jwk.kid).not.toBe(keys[1]!.jwk.kid);
    });

    it('keys are stable across calls and usable for signing', async () => {
      const first = await opened.store.keys.signingKeys();
      const second = await opened.store.keys.signingKeys();
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
      const [current, next] = await opened.store.keys.signingKeys();
      opened.clock.advance(10);
      const rotated = await opened.store.keys.rotateSigningKeys(3600);
      expect(rotated.map((k) => k.status)).toEqual(['current', 'next', 'retired']);
      expect(rotated[0]!.jwk.kid).toBe(next!.jwk.kid);
      expect(rotated[2]!.jwk.kid).toBe(current!.jwk.kid);
      expect(rotated[2]!.retireAfter).toBe(opened.clock.seconds + 3600);
      expect([current!.jwk.kid, next!.jwk.kid]).not.toContain(rotated[1]!.jwk.kid);
      expect((await opened.store.keys.signingKeys()).map((k) => k.jwk.kid)).toEqual(rotated.map((k) => k.jwk.kid));
    });

    it('order is current, next, then retired newest first; retired keys past retireAfter are dropped', async () => {
      const k0 = await opened.store.keys.signingKeys();
      const r1 = await opened.store.keys.rotateSigningKeys(100);
      opened.clock.advance(50);
      const r2 = await opened.store.keys.rotateSigningKeys(100);
      expect(r2.map((k) => k.status)).toEqual(['current', 'next', 'retired', 'retired']);
      expect(r2.slice(2).map((k) => k.jwk.kid)).toEqual([r1[0]!.jwk.kid, k0[0]!.jwk.kid]);
      opened.clock.advance(51);
      const later = await opened.store.keys.signingKeys();
      expect(later.map((k) => k.jwk.kid)).toEqual(r2.slice(0, 3).map((k) => k.jwk.kid));
      expect(await opened.store.cleanup()).toBeGreaterThanOrEqual(1);
      opened.clock.advance(100);
      const r3 = await opened.store.keys.rotateSigningKeys(10);
      expect(r3.map((k) => k.status)).toEqual(['current', 'next', 'retired']);
    });

    it('rotation refuses a negative retirement period', async () => {
      await expect(opened.store.keys.rotateSigningKeys(-1)).rejects.toThrow(RangeError);
    });
  });

  describe('cookie keys', () => {
    it('first use generates one random 32-byte base64url key, stable across calls', async () => {
      const keys = await opened.store.keys.cookieKeys();
      expect(keys).toHaveLength(1);
      expect(keys[0]).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(Buffer.from(keys[0]!, 'base64url')).toHaveLength(32);
      expect(await opened.store.keys.cookieKeys()).toEqual(keys);
    });

    it('rotation puts a new key first and keeps the older ones (up to 3) for verification', async () => {
      const [k1] = await opened.store.keys.cookieKeys();
      const r1 = await opened.store.keys.rotateCookieKeys();
      expect(r1).toHaveLength(2);
      expect(r1[1]).toBe(k1);
      const r2 = await opened.store.keys.rotateCookieKeys();
      const r3 = await opened.store.keys.rotateCookieKeys();
      expect(r3).toEqual([r3[0], r2[0], r1[0]]);
      expect(new Set(r3).size).toBe(3);
      expect(await opened.store.keys.cookieKeys()).toEqual(r3);
    });
  });
}
