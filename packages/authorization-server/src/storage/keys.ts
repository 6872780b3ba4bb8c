/**
 * Signing and cookie key life cycle, written once over a `KeyBackend`.
 *
 * Key material is generated *before* the backend's lock is taken (generation is async, a
 * SQLite transaction cannot be), then a pure function decides under the lock whether the
 * stored set changes. Two instances starting together therefore end with one set of keys:
 * the second one finds the first one's keys and throws its own candidates away.
 */
import { randomBytes } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from 'jose';
import { type Clock, epochSeconds } from './clock.js';
import type { KeyStore, StoredSigningKey } from './types.js';

export const SIGNING_ALG = 'ES256';
/** Cookie keys kept after a rotation (newest signs, the older ones still verify). */
export const COOKIE_KEYS_KEPT = 3;

export interface CookieKeyRecord {
  key: string;
  /** Epoch seconds. */
  createdAt: number;
}

/**
 * `mutate*` runs `change` on the stored rows under an exclusive lock (transaction, advisory
 * lock); when it returns an array the stored rows are replaced by it. Both return the rows
 * as stored afterwards.
 */
export interface KeyBackend {
  readSigningKeys(): Promise<StoredSigningKey[]>;
  mutateSigningKeys(change: (rows: StoredSigningKey[]) => StoredSigningKey[] | undefined): Promise<StoredSigningKey[]>;
  /** Newest first. */
  readCookieKeys(): Promise<CookieKeyRecord[]>;
  mutateCookieKeys(change: (rows: CookieKeyRecord[]) => CookieKeyRecord[] | undefined): Promise<CookieKeyRecord[]>;
}

/** A `signing_keys` row as the SQL stores read it (PostgreSQL returns BIGINT columns as strings). */
export interface SigningRow {
  jwk: string;
  status: StoredSigningKey['status'];
  created_at: number | string;
  retire_after: number | string | null;
}

export function signingFromRow(r: SigningRow): StoredSigningKey {
  const key: StoredSigningKey = { jwk: JSON.parse(r.jwk) as StoredSigningKey['jwk'], status: r.status, createdAt: Number(r.created_at) };
  if (r.retire_after !== null) key.retireAfter = Number(r.retire_after);
  return key;
}

export async function generateSigningJwk(): Promise<JWK> {
  const { privateKey } = await generateKeyPair(SIGNING_ALG, { extractable: true });
  const jwk = await exportJWK(privateKey);
  const kid = await calculateJwkThumbprint(jwk);
  return { ...jwk, kid, alg: SIGNING_ALG, use: 'sig' };
}

export function generateCookieKey(): string {
  return randomBytes(32).toString('base64url');
}

const STATUS_ORDER: Record<StoredSigningKey['status'], number> = { current: 0, next: 1, retired: 2 };

/** Current signer first, then the published next key, then retired keys (newest first). */
export function orderSigningKeys(keys: StoredSigningKey[]): StoredSigningKey[] {
  return [...keys].sort(
    (a, b) => STATUS_ORDER[a.status] - STATUS_ORDER[b.status] || (b.retireAfter ?? 0) - (a.retireAfter ?? 0) || b.createdAt - a.createdAt,
  );
}

export function isLive(key: StoredSigningKey, nowSeconds: number): boolean {
  return key.status !== 'retired' || (key.retireAfter ?? 0) > nowSeconds;
}

/** True when there is no live `current` or no `next` key. */
export function needsInitialKeys(rows: StoredSigningKey[], nowSeconds: number): boolean {
  const live = rows.filter((k) => isLive(k, nowSeconds));
  return !live.some((k) => k.status === 'current') || !live.some((k) => k.status === 'next');
}

/** First use: a `current` signer and an already published `next`; undefined if nothing to do. */
export function planInitialKeys(rows: StoredSigningKey[], fresh: JWK[], nowSeconds: number): StoredSigningKey[] | undefined {
  if (!needsInitialKeys(rows, nowSeconds)) return undefined;
  const live = rows.filter((k) => isLive(k, nowSeconds));
  const hasCurrent = live.some((k) => k.status === 'current');
  const hasNext = live.some((k) => k.status === 'next');
  const result = [...live];
  const pool = [...fresh];
  if (!hasCurrent) result.push({ jwk: take(pool), status: 'current', createdAt: nowSeconds });
  if (!hasNext) result.push({ jwk: take(pool), status: 'next', createdAt: nowSeconds });
  return result;
}

/** Publish-before-use rotation: next → current, current → retired until the given time, fresh next. */
export function planRotation(rows: StoredSigningKey[], fresh: JWK[], nowSeconds: number, retireAfterSeconds: number): StoredSigningKey[] {
  const pool = [...fresh];
  const live = rows.filter((k) => isLive(k, nowSeconds));
  const next = live.find((k) => k.status === 'next');
  const result: StoredSigningKey[] = [];
  for (const key of live) {
    if (key === next) continue;
    if (key.status === 'current') {
      result.push({ ...key, status: 'retired', retireAfter: nowSeconds + retireAfterSeconds });
    } else if (key.status === 'retired') {
      result.push(key);
    }
    // Stray extra `next` keys (never used to sign) are simply dropped.
  }
  result.push(next ? { ...next, status: 'current' } : { jwk: take(pool), status: 'current', createdAt: nowSeconds });
  result.push({ jwk: take(pool), status: 'next', createdAt: nowSeconds });
  return result;
}

function take(pool: JWK[]): JWK {
  const jwk = pool.shift();
  if (!jwk) throw new Error('key pool exhausted');
  return jwk;
}

export function createKeyStore(backend: KeyBackend, clock: Clock): KeyStore {
  const nowSeconds = () => epochSeconds(clock());

  async function signingKeys(): Promise<StoredSigningKey[]> {
    const now = nowSeconds();
    const stored = await backend.readSigningKeys();
    if (!needsInitialKeys(stored, now)) return orderSigningKeys(stored.filter((k) => isLive(k, now)));
    const fresh = [await generateSigningJwk(), await generateSigningJwk()];
    const rows = await backend.mutateSigningKeys((rows) => planInitialKeys(rows, fresh, nowSeconds()));
    return orderSigningKeys(rows.filter((k) => isLive(k, nowSeconds())));
  }

  async function rotateSigningKeys(retireAfterSeconds: number): Promise<StoredSigningKey[]> {
    if (!Number.isFinite(retireAfterSeconds) || retireAfterSeconds < 0) {
      throw new RangeError('retireAfterSeconds must be a non-negative number');
    }
    const fresh = [await generateSigningJwk(), await generateSigningJwk()];
    const rows = await backend.mutateSigningKeys((rows) => planRotation(rows, fresh, nowSeconds(), retireAfterSeconds));
    return orderSigningKeys(rows);
  }

  async function cookieKeys(): Promise<string[]> {
    const stored = await backend.readCookieKeys();
    if (stored.length > 0) return stored.map((r) => r.key);
    const candidate = { key: generateCookieKey(), createdAt: nowSeconds() };
    const rows = await backend.mutateCookieKeys((rows) => (rows.length > 0 ? undefined : [candidate]));
    return rows.map((r) => r.key);
  }

  async function rotateCookieKeys(): Promise<string[]> {
    const candidate = { key: generateCookieKey(), createdAt: nowSeconds() };
    const rows = await backend.mutateCookieKeys((rows) => [candidate, ...rows].slice(0, COOKIE_KEYS_KEPT));
    return rows.map((r) => r.key);
  }

  return { signingKeys, rotateSigningKeys, cookieKeys, rotateCookieKeys };
}
