/**
 * The token vault at rest (issue 41): AES-256-GCM with the account, provider and key id as
 * associated data (NIST SP 800-38D), so a sealed row opens only for the account and provider it
 * was written for; key rotation through the key id kept in each row.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../src/storage/index.js';
import { derivedVaultKey, seal, unseal, vaultKey } from '../src/third-party/seal.js';
import { TokenVault } from '../src/third-party/vault.js';

const key = () => vaultKey(randomBytes(32));
const TOKENS = {
  accessToken: 'at-secret-value',
  refreshToken: 'rt-secret-value',
  tokenType: 'Bearer',
  scopes: ['files.read'],
  expiresAt: 2_000_000_000,
};

describe('seal / unseal (AES-256-GCM)', () => {
  it('opens for the same account, provider and key only; a tampered value does not open', () => {
    const k = key();
    const sealed = seal('secret', k, 'alice', 'drive');
    expect(unseal(sealed, k, 'alice', 'drive')).toBe('secret');
    expect(unseal(sealed, k, 'bob', 'drive')).toBeUndefined();
    expect(unseal(sealed, k, 'alice', 'calendar')).toBeUndefined();
    expect(unseal(sealed, key(), 'alice', 'drive')).toBeUndefined();
    // relabelled with another key's id (same bytes): the id is bound too
    expect(unseal(sealed, { ...k, id: key().id }, 'alice', 'drive')).toBeUndefined();
    const bytes = Buffer.from(sealed, 'base64url');
    bytes[bytes.length - 20] = bytes[bytes.length - 20]! ^ 1;
    expect(unseal(bytes.toString('base64url'), k, 'alice', 'drive')).toBeUndefined();
    expect(unseal('short', k, 'alice', 'drive')).toBeUndefined();
  });

  it('a fresh nonce per seal: the same plaintext never seals alike', () => {
    const k = key();
    expect(seal('same', k, 'a', 'p')).not.toBe(seal('same', k, 'a', 'p'));
  });

  it('key ids name the key (a hash, never the key); a derived key is stable per cookie key', () => {
    const bytes = randomBytes(32);
    expect(vaultKey(bytes).id).toBe(vaultKey(Buffer.from(bytes)).id);
    expect(vaultKey(bytes).id).not.toContain(bytes.toString('base64url').slice(0, 8));
    expect(derivedVaultKey('cookie-key-1').id).toBe(derivedVaultKey('cookie-key-1').id);
    expect(derivedVaultKey('cookie-key-1').id).not.toBe(derivedVaultKey('cookie-key-2').id);
  });
});

describe('TokenVault over a store', () => {
  let store: Store;
  beforeEach(async () => {
    store = await openStore({ kind: 'memory' }, { cleanupIntervalSeconds: 0 });
  });
  afterEach(() => store.close());

  it('saves sealed and opens what it saved; a row copied to another account does not open', async () => {
    const vault = new TokenVault(store, [key()]);
    await vault.save('alice', 'drive', TOKENS);
    const row = (await store.connections.get('alice', 'drive'))!;
    expect(JSON.stringify(row)).not.toContain('secret-value');
    expect(await vault.open('alice', 'drive')).toMatchObject({ tokens: TOKENS, staleKey: false });
    // an attacker with write access to the table copies alice's row to mallory
    const { createdAt: _c, updatedAt: _u, version: _v, ...copy } = row;
    await store.connections.put({ ...copy, accountId: 'mallory' });
    expect(await vault.open('mallory', 'drive')).toBe('unreadable');
    await store.connections.put({ ...copy, provider: 'calendar' });
    expect(await vault.open('alice', 'calendar')).toBe('unreadable');
    expect(await vault.open('alice', 'mail')).toBe('none');
  });

  it('rotation: rows sealed with a previous key open (staleKey) and are re-sealed with the current key when replaced', async () => {
    const old = key();
    const current = key();
    await new TokenVault(store, [old]).save('alice', 'drive', TOKENS);
    const rotated = new TokenVault(store, [current, old]);
    const open = await rotated.open('alice', 'drive');
    expect(open).toMatchObject({ tokens: TOKENS, staleKey: true });
    if (typeof open !== 'object') throw new Error('not open');
    expect(await rotated.replace('alice', 'drive', open.tokens, open.version)).toBe(true);
    expect((await store.connections.get('alice', 'drive'))?.keyId).toBe(current.id);
    // a server that lost the old key cannot open rows sealed with it: the user connects again
    await new TokenVault(store, [old]).save('bob', 'drive', TOKENS);
    expect(await new TokenVault(store, [current]).open('bob', 'drive')).toBe('unreadable');
  });

  it('lists without secrets', async () => {
    const vault = new TokenVault(store, [key()]);
    await vault.save('alice', 'drive', { ...TOKENS, providerSubject: 'u1' });
    const listed = await vault.list('alice');
    expect(listed).toEqual([
      { provider: 'drive', scopes: ['files.read'], providerSubject: 'u1', createdAt: expect.any(Number), updatedAt: expect.any(Number) },
    ]);
    expect(JSON.stringify(listed)).not.toContain('secret-value');
  });
});
