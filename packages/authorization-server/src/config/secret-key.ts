/**
 * The form of every symmetric key the operator configures (the DPoP nonce secret, the token
 * vault's encryption keys): 32 random bytes in base64url, so a key is never a passphrase.
 */

/** What a refused key is told, after its option's name. */
export const KEY_32_RULE = 'must be 32 bytes encoded as base64url (e.g. `openssl rand 32 | basenc --base64url`)';

/** The 32 bytes of a configured key, or undefined when it is not one. */
export function decodeKey32(value: unknown): Buffer | undefined {
  if (typeof value !== 'string' || !/^[A-Za-z0-9_-]+$/.test(value)) return undefined;
  const bytes = Buffer.from(value, 'base64url');
  return bytes.byteLength === 32 ? bytes : undefined;
}
