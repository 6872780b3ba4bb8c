import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** Length of one nonce period. */
const STEP_SECONDS = 60;

/**
 * Stateless, time-windowed DPoP nonces (RFC 9449 §9): `HMAC-SHA256(secret, period)`. Any instance
 * with the same secret accepts them, so nothing is stored. A nonce stays valid for `lifetimeSeconds`
 * (rounded up to whole periods), plus one period of clock difference between instances.
 */
export class DpopNonces {
  readonly #secret: Buffer;
  readonly #periods: number;
  constructor(
    secret: Uint8Array | undefined,
    lifetimeSeconds: number,
    private readonly now: () => number = Date.now,
  ) {
    this.#secret = secret === undefined ? randomBytes(32) : Buffer.from(secret);
    this.#periods = Math.max(1, Math.ceil(lifetimeSeconds / STEP_SECONDS));
  }

  #step(): number {
    return Math.floor(this.now() / 1000 / STEP_SECONDS);
  }

  #value(step: number): string {
    return createHmac('sha256', this.#secret).update(`mcp-auth-kit dpop nonce ${step}`).digest('base64url');
  }

  /** The nonce clients should use now. */
  current(): string {
    return this.#value(this.#step());
  }

  /** `fresh`: the current nonce; `stale`: still accepted, but a new one should be handed out. */
  check(nonce: string): 'fresh' | 'stale' | 'invalid' {
    const step = this.#step();
    const given = Buffer.from(nonce);
    let result: 'fresh' | 'stale' | 'invalid' = 'invalid';
    // every candidate is compared, so timing does not reveal which period matched
    for (let s = step + 1; s >= step - this.#periods; s--) {
      const expected = Buffer.from(this.#value(s));
      if (expected.length === given.length && timingSafeEqual(expected, given) && result === 'invalid') {
        result = s >= step ? 'fresh' : 'stale';
      }
    }
    return result;
  }
}

/** Decodes a 32-byte secret given as base64url text (or bytes). */
export function decodeNonceSecret(secret: string | Uint8Array): Uint8Array | undefined {
  const bytes = typeof secret === 'string' ? (/^[A-Za-z0-9_-]+$/.test(secret) ? Buffer.from(secret, 'base64url') : undefined) : secret;
  return bytes !== undefined && bytes.byteLength === 32 ? bytes : undefined;
}
