import { constants, KeyObject, verify, type VerifyKeyObjectInput } from 'node:crypto';
import { isCanonicalBase64url } from '@mcp-auth-kit/protocol';
import { importJWK, type CryptoKey, type JWK } from 'jose';
import { isCryptoKey } from './key-memo.js';

/**
 * The JWS signature check of an access token (RFC 7515 §5.2 steps 8–9, RFC 7518 §3) with a
 * WebCrypto key the issuer's JWK set chose, on `node:crypto`'s callback `verify`: the same
 * OpenSSL verification on the libuv thread pool as WebCrypto's, without jose's second decode of
 * the header and payload or WebCrypto's argument normalisation. With the cache off this runs for
 * every request, and that work is main-thread time every other request of the process waits
 * for. The signing key's algorithm is checked against `alg` as jose
 * checks a CryptoKey (algorithm name, hash, curve, `verify` usage, a public key, RSA modulus of
 * 2048 bits or more), so a key imported for one algorithm never verifies another.
 *
 * The one path for every key: a JWK or a `KeyObject` from a caller's `getKeys` is imported as the
 * WebCrypto key of `alg` first (by jose, which refuses a key of another type), then checked and
 * used the same way. The RFC 7515 / RFC 8037 examples and jose's own answers are run against it
 * (test/jws-signature.test.ts).
 */

interface AlgorithmEntry {
  /** The CryptoKey `algorithm` the key must have been imported with. */
  key: { name: string; hash?: string; namedCurve?: string };
  /** `node:crypto` digest name (`null`: the algorithm hashes itself, Ed25519). */
  digest: string | null;
  options: Omit<VerifyKeyObjectInput, 'key'>;
  /** Exact signature length in bytes, where the algorithm fixes it (ECDSA's R || S, RFC 7518 §3.4). */
  signatureBytes?: number;
  minRsaBits?: number;
}

const pkcs1 = (bits: number): AlgorithmEntry => ({
  key: { name: 'RSASSA-PKCS1-v1_5', hash: `SHA-${bits}` },
  digest: `sha${bits}`,
  options: { padding: constants.RSA_PKCS1_PADDING },
  minRsaBits: 2048,
});
// RFC 7518 §3.5: the salt is as long as the hash; an exact length, not OpenSSL's "auto" on verify.
const pss = (bits: number): AlgorithmEntry => ({
  key: { name: 'RSA-PSS', hash: `SHA-${bits}` },
  digest: `sha${bits}`,
  options: { padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: bits / 8 },
  minRsaBits: 2048,
});
const ecdsa = (namedCurve: string, bits: number, signatureBytes: number): AlgorithmEntry => ({
  key: { name: 'ECDSA', namedCurve },
  digest: `sha${bits}`,
  options: { dsaEncoding: 'ieee-p1363' },
  signatureBytes,
});
const ed25519: AlgorithmEntry = { key: { name: 'Ed25519' }, digest: null, options: {}, signatureBytes: 64 };

const ALGORITHMS: ReadonlyMap<string, AlgorithmEntry> = new Map([
  ['RS256', pkcs1(256)],
  ['RS384', pkcs1(384)],
  ['RS512', pkcs1(512)],
  ['PS256', pss(256)],
  ['PS384', pss(384)],
  ['PS512', pss(512)],
  ['ES256', ecdsa('P-256', 256, 64)],
  ['ES384', ecdsa('P-384', 384, 96)],
  ['ES512', ecdsa('P-521', 512, 132)],
  ['EdDSA', ed25519],
  ['Ed25519', ed25519],
]);

/** A key that may not verify `alg`: the issuer's JWK set is at fault, not the token. */
export class UnusableKeyError extends TypeError {
  override name = 'UnusableKeyError';
}

const keyObjects = new WeakMap<CryptoKey, KeyObject>();

/**
 * Whether `signature` (the third segment of a compact JWS, base64url) is `alg`'s signature of
 * `signingInput` (the first two segments and their dot) under `key`. Resolves `false` for a
 * signature that does not verify, including one of the wrong length or not in canonical base64url.
 * @throws {UnusableKeyError} (rejects) when `key` is not a public `verify` key of `alg`.
 */
export function verifyJwsSignature(alg: string, key: unknown, signingInput: string, signature: string): Promise<boolean> {
  if (!isCryptoKey(key)) return asCryptoKey(alg, key).then((imported) => verifyJwsSignature(alg, imported, signingInput, signature));
  const entry = ALGORITHMS.get(alg);
  if (entry === undefined) return Promise.reject(new UnusableKeyError(`alg ${alg} is not verified here`));
  try {
    checkKey(alg, entry, key);
  } catch (err) {
    return Promise.reject(err);
  }
  // Buffer's decoder ignores the unused low bits of the last character: accepting them would
  // let one signature be spelt several ways.
  if (!isCanonicalBase64url(signature)) return Promise.resolve(false);
  const bytes = Buffer.from(signature, 'base64url');
  if (entry.signatureBytes !== undefined && bytes.length !== entry.signatureBytes) return Promise.resolve(false);
  let keyObject = keyObjects.get(key);
  if (keyObject === undefined) {
    keyObject = KeyObject.from(key);
    keyObjects.set(key, keyObject);
  }
  const input: VerifyKeyObjectInput = { key: keyObject, ...entry.options };
  return new Promise((resolve, reject) => {
    verify(entry.digest, Buffer.from(signingInput, 'latin1'), input, bytes, (err, valid) => (err ? reject(err) : resolve(valid)));
  });
}

function checkKey(alg: string, entry: AlgorithmEntry, key: CryptoKey): void {
  const algorithm = key.algorithm as { name?: string; hash?: { name?: string }; namedCurve?: string; modulusLength?: number };
  const expected = entry.key;
  if (
    key.type !== 'public' ||
    !key.usages.includes('verify') ||
    algorithm.name !== expected.name ||
    (expected.hash !== undefined && algorithm.hash?.name !== expected.hash) ||
    (expected.namedCurve !== undefined && algorithm.namedCurve !== expected.namedCurve)
  ) {
    throw new UnusableKeyError(`the key is not a public ${expected.name} verification key for ${alg}`);
  }
  if (entry.minRsaBits !== undefined && !(typeof algorithm.modulusLength === 'number' && algorithm.modulusLength >= entry.minRsaBits)) {
    throw new UnusableKeyError(`${alg} requires an RSA modulus of ${entry.minRsaBits} bits or more`);
  }
}

/** A JWK or a public `KeyObject` as the WebCrypto key of `alg`; anything else (a secret) is refused. */
async function asCryptoKey(alg: string, key: unknown): Promise<CryptoKey> {
  if (!ALGORITHMS.has(alg)) throw new UnusableKeyError(`alg ${alg} is not verified here`);
  let jwk: JWK | undefined;
  if (key instanceof KeyObject) jwk = key.type === 'public' ? key.export({ format: 'jwk' }) : undefined;
  else if (typeof key === 'object' && key !== null && !(key instanceof Uint8Array) && typeof (key as JWK).kty === 'string')
    jwk = key as JWK;
  if (jwk === undefined || jwk.kty === 'oct') throw new UnusableKeyError(`the key is not a public verification key for ${alg}`);
  try {
    return (await importJWK(jwk, alg)) as CryptoKey;
  } catch (cause) {
    throw new UnusableKeyError(`the key is not a public verification key for ${alg}`, { cause });
  }
}
