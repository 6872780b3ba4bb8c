/**
 * The grace record of a refresh: the token response sealed with a key only a holder of the
 * presented (old) refresh token can derive, so the shared store never holds anything usable.
 *
 * slot   = SHA-256(refresh token), base64url — the store key; never the token itself.
 * key    = HKDF-SHA-256(ikm = refresh token, salt = random 16 bytes, info = INFO) → 32 bytes
 * record = AES-256-GCM(key, random 12-byte iv, aad = slot) over the JSON payload.
 */
import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';

const INFO = 'mcp-auth-kit refresh-grace v1';
const TAG_BYTES = 16;

/** What the first refresh left behind for concurrent or retried ones. */
export interface GracePayload {
  /** The client the provider authenticated on the first request. */
  clientId: string;
  /** DPoP key thumbprint the first request proved (undefined: no DPoP). */
  jkt?: string;
  /** Fingerprint of the request parameters that shape the response (scope, resource). */
  request: string;
  /** The token response body the provider produced (JSON). */
  body: Record<string, unknown>;
  /** Epoch milliseconds when the response was produced. */
  issuedAt: number;
}

/** The stored form: a success is sealed, a failure is only a marker. */
export type GraceRecord = { v: 1; salt: string; iv: string; ct: string } | { v: 1; failed: true };

export function graceSlot(refreshToken: string): string {
  return createHash('sha256').update(refreshToken, 'utf8').digest('base64url');
}

function deriveKey(refreshToken: string, salt: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', Buffer.from(refreshToken, 'utf8'), salt, INFO, 32));
}

export function sealGracePayload(refreshToken: string, slot: string, payload: GracePayload): GraceRecord {
  const salt = randomBytes(16);
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', deriveKey(refreshToken, salt), iv);
  cipher.setAAD(Buffer.from(slot, 'utf8'));
  const ct = Buffer.concat([cipher.update(JSON.stringify(payload), 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return { v: 1, salt: salt.toString('base64url'), iv: iv.toString('base64url'), ct: ct.toString('base64url') };
}

/** The payload, or undefined when the record is a failure marker, malformed, or not ours to open. */
export function openGraceRecord(refreshToken: string, slot: string, record: unknown): GracePayload | undefined {
  if (!record || typeof record !== 'object') return undefined;
  const r = record as Partial<{ v: number; salt: string; iv: string; ct: string; failed: boolean }>;
  if (r.v !== 1 || r.failed || typeof r.salt !== 'string' || typeof r.iv !== 'string' || typeof r.ct !== 'string') return undefined;
  try {
    const data = Buffer.from(r.ct, 'base64url');
    if (data.length <= TAG_BYTES) return undefined;
    const decipher = createDecipheriv(
      'aes-256-gcm',
      deriveKey(refreshToken, Buffer.from(r.salt, 'base64url')),
      Buffer.from(r.iv, 'base64url'),
    );
    decipher.setAAD(Buffer.from(slot, 'utf8'));
    decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
    const json = Buffer.concat([decipher.update(data.subarray(0, data.length - TAG_BYTES)), decipher.final()]).toString('utf8');
    const payload = JSON.parse(json) as GracePayload;
    if (typeof payload?.clientId !== 'string' || typeof payload.body !== 'object' || payload.body === null) return undefined;
    return payload;
  } catch {
    return undefined;
  }
}

export function isFailureMarker(record: unknown): boolean {
  return !!record && typeof record === 'object' && (record as { failed?: unknown }).failed === true;
}
