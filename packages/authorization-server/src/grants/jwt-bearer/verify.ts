/**
 * The checks of an ID-JAG presented at `/token`, in the order of
 * draft-ietf-oauth-identity-assertion-authz-grant §4.4.1 (with RFC 7521 §5.2, RFC 7523 §3) and the
 * MCP enterprise-managed authorization profile §5.1, §7.4, §7.6:
 *
 *  1. signature against the keys of the IdP the unverified `iss` names (an issuer that is not
 *     trusted has no keys here, so it is refused first; the trust decision is repeated on the
 *     verified claims in step 3);
 *  2. `typ` is `oauth-id-jag+jwt` (RFC 8725 §3.11);
 *  3. `iss` is a trusted IdP;
 *  4. `aud` is this server's issuer, alone (§4.4.1);
 *  5. `client_id` is the authenticated client (§4.4.1), which this IdP may speak for;
 *  6. `resource` is one of ours (profile §7.6.2) and becomes the token's audience (RFC 8707);
 *  7. `exp`, `nbf`, `iat` within the clock tolerance and the maximum age, `sub` and `jti`
 *     present (RFC 7523 §3), the `jti` never seen before (profile §7.4.2: replay detection
 *     REQUIRED, in the store every instance shares);
 *  8. scopes: those of the ID-JAG that are scopes of the resource (profile §7.6.2), at most what
 *     the client asked for (RFC 6749 §3.3) and what it may hold.
 *
 * Pure apart from the key lookup and the replay store, both passed in; the clock is passed in.
 */
import { compactVerify, decodeJwt, decodeProtectedHeader, errors as joseErrors } from 'jose';
import { isCanonicalCompactJws, splitScope } from '@mcp-auth-kit/protocol';
import type { ResourceRegistry } from '../../tokens/resources.js';
import type { TrustedIdp } from './idp-keys.js';
import { IdJagRefusal, refuse } from './refusal.js';
import { ID_JAG_TYP } from './constants.js';
import { normalizedTyp } from './assertion-typ.js';
import { checkAssertionTimes } from './assertion-times.js';

export interface IdJagClaims {
  iss: string;
  sub: string;
  aud: string | string[];
  client_id: string;
  jti: string;
  exp: number;
  iat: number;
  nbf?: number;
  resource?: string | string[];
  scope?: string;
  email?: string;
  email_verified?: boolean;
  [claim: string]: unknown;
}

export interface IdJagCheckInput {
  assertion: string;
  /** The client authenticated at the token endpoint. */
  clientId: string;
  /** This server's issuer identifier. */
  issuer: string;
  idps: ReadonlyMap<string, TrustedIdp>;
  resources: ResourceRegistry;
  /** The request's `resource` parameter(s), if any. */
  requestedResource?: string | string[] | undefined;
  /** The request's `scope` parameter, if any. */
  requestedScope?: string | undefined;
  /** Resource scopes this client may hold at all (undefined: no limit of its own). */
  clientScopes?: ReadonlySet<string> | undefined;
  /** Epoch seconds. */
  now: number;
  clockTolerance: number;
  maxAge: number;
  /** Records the `jti` for `ttlSeconds`; false when it was already recorded (a replay). */
  firstUse(issuer: string, jti: string, ttlSeconds: number): Promise<boolean>;
}

export interface VerifiedIdJag {
  idp: TrustedIdp;
  claims: IdJagClaims;
  resource: string;
  scopes: string[];
}

async function verifySignature(input: IdJagCheckInput): Promise<{ idp: TrustedIdp; header: { typ?: unknown }; payload: unknown }> {
  let unverifiedIss: unknown;
  try {
    // jose verifies a signature segment with whitespace inside (its decoder skips it), or with the
    // unused bits of its last character set: a signature over the exact text is no reason to
    // accept other spellings of the assertion
    if (!isCanonicalCompactJws(input.assertion)) throw new TypeError('not the JWS compact serialization');
    decodeProtectedHeader(input.assertion);
    // jose's decode: a compact JWS whose payload is a JSON object, or it throws
    unverifiedIss = decodeJwt(input.assertion).iss;
  } catch {
    return refuse('invalid_grant', 'malformed', 'the assertion is not a signed JWT (RFC 7523 §3)');
  }
  const idp = typeof unverifiedIss === 'string' ? input.idps.get(unverifiedIss) : undefined;
  if (!idp) return refuse('invalid_grant', 'iss', 'the assertion is not issued by a trusted identity provider');
  try {
    const { payload, protectedHeader } = await compactVerify(input.assertion, idp.keys, { algorithms: idp.algorithms });
    return { idp, header: protectedHeader, payload: JSON.parse(new TextDecoder().decode(payload)) };
  } catch (err) {
    if (err instanceof joseErrors.JOSEAlgNotAllowed)
      return refuse('invalid_grant', 'alg', `the assertion's signature algorithm is not accepted for ${idp.name}`);
    const bad =
      err instanceof joseErrors.JWSSignatureVerificationFailed ||
      err instanceof joseErrors.JWKSNoMatchingKey ||
      err instanceof joseErrors.JWKSMultipleMatchingKeys ||
      err instanceof joseErrors.JWSInvalid ||
      err instanceof joseErrors.JOSENotSupported;
    if (bad)
      return refuse(
        'invalid_grant',
        'signature',
        `the assertion's signature does not verify with the keys of ${idp.name} (RFC 7523 §3 item 9)`,
      );
    // The JWKS could not be fetched or read: not the client's fault, and not a verdict on the assertion.
    throw new IdJagRefusal('temporarily_unavailable', "the identity provider's keys could not be obtained; try again later", 'jwks', {
      cause: err,
    });
  }
}

function checkTyp(header: { typ?: unknown }): void {
  if (normalizedTyp(header) !== ID_JAG_TYP)
    refuse('invalid_grant', 'typ', `the assertion's typ must be "${ID_JAG_TYP}" (draft §4.4.1, RFC 8725 §3.11)`);
}

function checkAudience(aud: unknown, issuer: string): void {
  const single = Array.isArray(aud) && aud.length === 1 ? aud[0] : aud;
  if (single !== issuer) refuse('invalid_grant', 'aud', `the assertion's aud must be this server's issuer ${issuer}, alone (draft §4.4.1)`);
}

function chooseResource(claims: IdJagClaims, input: IdJagCheckInput): string {
  const { resources } = input;
  const claimed = claims.resource === undefined ? undefined : Array.isArray(claims.resource) ? claims.resource : [claims.resource];
  if (claimed) {
    if (claimed.length === 0 || claimed.some((r) => typeof r !== 'string' || !resources.get(r)))
      refuse('invalid_grant', 'resource', 'the resource named in the assertion is not a resource of this server (MCP profile §7.6.2)');
  }
  const requested =
    input.requestedResource === undefined
      ? undefined
      : Array.isArray(input.requestedResource)
        ? input.requestedResource
        : [input.requestedResource];
  if (requested && requested.length !== 1) refuse('invalid_target', 'resource', 'name exactly one resource (RFC 8707 §2)');
  const wanted = requested?.[0];
  if (wanted !== undefined) {
    if (!resources.get(wanted))
      refuse('invalid_target', 'resource', 'the requested resource is not a resource of this server (RFC 8707 §2)');
    if (claimed && !claimed.includes(wanted))
      refuse('invalid_target', 'resource', 'the requested resource is not one the assertion grants (RFC 8707 §2)');
    return wanted;
  }
  if (claimed?.length === 1) return claimed[0]!;
  if (claimed)
    refuse('invalid_target', 'resource', 'the assertion names several resources: name one with the resource parameter (RFC 8707 §2)');
  const fallback = resources.defaultResource;
  if (!fallback)
    refuse('invalid_target', 'resource', 'resource parameter is required: this server protects several resources (RFC 8707 §2)');
  return fallback!;
}

async function checkTimesAndReplay(claims: IdJagClaims, input: IdJagCheckInput): Promise<void> {
  const { now, clockTolerance: skew, maxAge } = input;
  checkAssertionTimes(claims, { now, skew, maxAge, iatRequired: true, iatRule: 'draft §3.1' });
  if (typeof claims.sub !== 'string' || !claims.sub) refuse('invalid_grant', 'sub', 'the assertion has no sub (RFC 7523 §3 item 2)');
  if (typeof claims.jti !== 'string' || !claims.jti) refuse('invalid_grant', 'jti', 'the assertion has no jti (draft §3.1)');
  // Remembered until the assertion could no longer pass the exp check anyway.
  const ttl = Math.max(1, Math.ceil(claims.exp + skew - now));
  if (!(await input.firstUse(claims.iss, claims.jti, ttl)))
    refuse('invalid_grant', 'replay', 'the assertion has already been used (MCP profile §7.4.2: jti replay)');
}

function chooseScopes(claims: IdJagClaims, resource: string, input: IdJagCheckInput): string[] {
  if (claims.scope !== undefined && typeof claims.scope !== 'string')
    refuse('invalid_grant', 'scope', "the assertion's scope must be a space-separated string (draft §3.1)");
  const resourceScopes = new Set(Object.keys(input.resources.get(resource)?.scopes ?? {}));
  const granted = splitScope(claims.scope);
  const foreign = granted.filter((s) => !resourceScopes.has(s));
  if (foreign.length)
    refuse(
      'invalid_grant',
      'scope',
      `the assertion grants scopes that ${resource} does not define: ${foreign.join(' ')} (MCP profile §7.6.2)`,
    );
  const requested = input.requestedScope === undefined ? undefined : splitScope(input.requestedScope);
  const allowed = (s: string) => !input.clientScopes || input.clientScopes.has(s);
  if (requested) {
    const beyond = requested.filter((s) => !granted.includes(s));
    if (beyond.length)
      refuse('invalid_scope', 'scope', `requested scope exceeds what the assertion grants: ${beyond.join(' ')} (RFC 6749 §3.3)`);
    const refused = requested.filter((s) => !allowed(s));
    if (refused.length) refuse('invalid_scope', 'scope', `this client may not hold: ${refused.join(' ')}`);
    return requested;
  }
  const scopes = granted.filter(allowed);
  if (granted.length && !scopes.length) refuse('invalid_scope', 'scope', 'this client may hold none of the scopes the assertion grants');
  return scopes;
}

/** Runs every check in order; throws an {@link IdJagRefusal} at the first that fails. */
export async function verifyIdJag(input: IdJagCheckInput): Promise<VerifiedIdJag> {
  const { idp, header, payload } = await verifySignature(input);
  checkTyp(header);
  if (!payload || typeof payload !== 'object' || Array.isArray(payload))
    refuse('invalid_grant', 'malformed', 'the assertion payload is not a JSON object (RFC 7519 §7.2)');
  const claims = payload as IdJagClaims;
  if (claims.iss !== idp.config.issuer || input.idps.get(claims.iss) !== idp)
    refuse('invalid_grant', 'iss', 'the assertion is not issued by a trusted identity provider');
  checkAudience(claims.aud, input.issuer);
  if (claims.client_id !== input.clientId)
    refuse('invalid_grant', 'client_id', "the assertion's client_id is not the authenticated client (draft §4.4.1)");
  if (!idp.config.clients.includes('*') && !idp.config.clients.includes(input.clientId))
    refuse('unauthorized_client', 'idp_client', `this client may not present assertions of ${idp.name}`);
  const resource = chooseResource(claims, input);
  await checkTimesAndReplay(claims, input);
  const scopes = chooseScopes(claims, resource, input);
  return { idp, claims, resource, scopes };
}

export { IdJagRefusal };
