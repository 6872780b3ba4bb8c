/**
 * Encryption at rest of the provider tokens (AES-256-GCM, node:crypto). A sealed value is
 * base64url(nonce ‖ ciphertext ‖ tag) with a fresh 96-bit nonce (NIST SP 800-38D §8.2.2: random
 * nonces are fine far below 2^32 messages per key). The associated data names the account, the
 * provider and the key: a row copied to another account or provider, or relabelled with another
 * key id, fails authentication instead of opening (issue 41: tokens bound to the user's identity).
 */
import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';

const NONCE = 12;
const TAG = 16;
const FORMAT = 'mcp-auth-kit third-party vault v1';

export interface VaultKey {
  /** Stored with each record: a hash of the key, so the key that sealed a row is found again. */
  id: string;
  key: Buffer;
}

/** The id of a key: 16 base64url characters of its SHA-256 (labelled), never the key. */
export function vaultKeyId(key: Buffer): string {
  return createHash('sha256').update(`${FORMAT} key id\u0000`).update(key).digest('base64url').slice(0, 16);
}

export function vaultKey(key: Buffer): VaultKey {
  return { id: vaultKeyId(key), key };
}

/**
 * The development key (no `thirdParty.encryptionKey`): one per cookie key of the store (HKDF,
 * RFC 5869), so every instance on the store derives the same keys and records stay readable
 * while a rotated cookie key is still kept. Production refuses to start without a key of its own.
 */
export function derivedVaultKey(cookieKey: string): VaultKey {
  return vaultKey(Buffer.from(hkdfSync('sha256', cookieKey, '', `${FORMAT} derived from a cookie key`, 32)));
}

/** The record's binding: account, provider and key, unambiguous (NUL-separated; none holds a NUL). */
function associatedData(accountId: string, provider: string, keyId: string): Buffer {
  return Buffer.from(`${FORMAT}\u0000${accountId}\u0000${provider}\u0000${keyId}`);
}

export function seal(plaintext: string, key: VaultKey, accountId: string, provider: string): string {
  const nonce = randomBytes(NONCE);
  const cipher = createCipheriv('aes-256-gcm', key.key, nonce, { authTagLength: TAG });
  cipher.setAAD(associatedData(accountId, provider, key.id));
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return Buffer.concat([nonce, body, cipher.getAuthTag()]).toString('base64url');
}

/** The plaintext, or undefined when the value does not open under this key for this account and provider. */
export function unseal(sealed: string, key: VaultKey, accountId: string, provider: string): string | undefined {
  const bytes = Buffer.from(sealed, 'base64url');
  if (bytes.length < NONCE + TAG) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key.key, bytes.subarray(0, NONCE), { authTagLength: TAG });
    decipher.setAAD(associatedData(accountId, provider, key.id));
    decipher.setAuthTag(bytes.subarray(bytes.length - TAG));
    return Buffer.concat([decipher.update(bytes.subarray(NONCE, bytes.length - TAG)), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}
