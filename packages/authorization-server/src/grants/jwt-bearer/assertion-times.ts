/**
 * The time checks of RFC 7523 §3 on a JWT bearer assertion (items 4-6), one rule for both kinds
 * of assertion (an ID-JAG, a client's own): `exp` present, not passed and at most `maxAge` ahead;
 * `nbf` passed; `iat` not in the future and at most `maxAge` old — required when `iatRequired`
 * (ID-JAG, draft §3.1), else checked when present. `skew` seconds of clock tolerance each.
 */
import { refuse } from '../refusal.js';

export interface AssertionTimes {
  exp?: unknown;
  nbf?: unknown;
  iat?: unknown;
}

const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

export function checkAssertionTimes(
  claims: AssertionTimes,
  o: { now: number; skew: number; maxAge: number; iatRequired: boolean; iatRule: string },
): undefined {
  const { now, skew, maxAge } = o;
  if (!isNumber(claims.exp)) return refuse('invalid_grant', 'exp', 'the assertion has no exp (RFC 7523 §3 item 4)');
  if (claims.exp + skew <= now) refuse('invalid_grant', 'exp', 'the assertion has expired (RFC 7523 §3 item 4)');
  if (claims.exp - skew > now + maxAge)
    refuse('invalid_grant', 'exp', `the assertion is valid for too long (more than ${maxAge} s; RFC 7523 §3 item 4)`);
  if (claims.nbf !== undefined && (!isNumber(claims.nbf) || claims.nbf - skew > now))
    refuse('invalid_grant', 'nbf', 'the assertion is not valid yet (RFC 7523 §3 item 5)');
  if (claims.iat === undefined && !o.iatRequired) return;
  if (!isNumber(claims.iat)) return refuse('invalid_grant', 'iat', `the assertion has no iat (${o.iatRule})`);
  if (claims.iat - skew > now) refuse('invalid_grant', 'iat', 'the assertion is issued in the future (RFC 7523 §3 item 6)');
  if (now - claims.iat > maxAge) refuse('invalid_grant', 'iat', `the assertion was issued more than ${maxAge} s ago (RFC 7523 §3 item 6)`);
  return undefined;
}
