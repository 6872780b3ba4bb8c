/**
 * Configuration of the Identity Assertion JWT Authorization Grant (ID-JAG, the RFC 7523 §2.1 JWT
 * bearer grant of MCP enterprise-managed authorization): which enterprise IdPs this server
 * trusts, which clients may present their ID-JAGs, and how their users map to local accounts.
 */
import { isLoopbackHost } from '@mcp-auth-kit/protocol';
import type { JWK } from 'jose';
import { parseUrl } from '../../urls.js';

/** How an ID-JAG's user finds its local account. */
export type IdJagAccountMatch = 'subject' | 'email';

/** An enterprise identity provider whose ID-JAGs this server accepts. */
export interface TrustedIdpConfig {
  /** Shown in logs and audit events (default: the issuer). */
  name?: string;
  /** The IdP's issuer identifier, compared as an exact string with the ID-JAG's `iss`. */
  issuer: string;
  /** The IdP's JWKS URL (https; http only for a loopback IdP on a loopback issuer). One of `jwksUri` / `jwks`. */
  jwksUri?: string;
  /** The IdP's public keys inline, instead of `jwksUri`. */
  jwks?: { keys: JWK[] };
  /**
   * `client_id`s (at this server) that may present this IdP's ID-JAGs (the ID-JAG's `client_id`
   * claim names one of them); `"*"`: every client allowed to use the grant at all.
   */
  clients: string[];
  /** Signature algorithms accepted (default RS256, PS256, ES256, EdDSA; never `none` or HMAC). */
  algorithms?: string[];
  /**
   * `subject` (default): the account linked to (`iss`, `sub`). `email`: the same, and on a
   * user's first ID-JAG an existing account whose username is the verified `email` is linked.
   */
  accountMatch?: IdJagAccountMatch;
  /** Create an account on a user's first ID-JAG (just-in-time; default true). */
  createAccounts?: boolean;
  /**
   * With `accountMatch: 'email'`: `claim` (default) links only when the ID-JAG says
   * `email_verified: true`; `trusted` takes every `email` of this IdP as verified (IdPs such as
   * Entra ID that send no `email_verified`) and then requires `emailDomains`.
   */
  verifiedEmail?: 'claim' | 'trusted';
  /** With `accountMatch: 'email'`: only e-mail addresses of these domains are linked. */
  emailDomains?: string[];
  /** The JWKS lives on the private network (default false: public addresses; loopback for a loopback IdP). */
  allowPrivateNetwork?: boolean;
}

export interface IdJagConfig {
  trustedIdps: TrustedIdpConfig[];
  /**
   * Issue a refresh token too, to clients registered with the `refresh_token` grant (default
   * false: the IdP stays the decision-maker, the client asks it for a new ID-JAG; draft §4.4.3).
   */
  refreshTokens?: boolean;
  /**
   * Clients other than the configured ones that may use the grant (default none):
   * `dynamic` (RFC 7591 registrations) and `cimd` (Client ID Metadata Documents, which then
   * authenticate with `private_key_jwt`). Confidential clients only, whatever the source.
   */
  allowClients?: Array<'dynamic' | 'cimd'>;
  /** Clock skew accepted on `exp`, `nbf` and `iat`, in seconds (default 30). */
  clockToleranceSeconds?: number;
  /** Longest ID-JAG lifetime accepted (`exp` − now and now − `iat`), in seconds (default 600). */
  maxAgeSeconds?: number;
}

export const DEFAULT_ID_JAG_ALGORITHMS: readonly string[] = ['RS256', 'PS256', 'ES256', 'EdDSA'];
export const DEFAULT_ID_JAG_CLOCK_TOLERANCE = 30;
export const DEFAULT_ID_JAG_MAX_AGE = 600;

const ASYMMETRIC = /^(RS|PS|ES)(256|384|512)$|^EdDSA$|^Ed25519$|^ES256K$/;

function isStringList(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((v) => typeof v === 'string' && v.trim() !== '');
}

function idpProblems(
  idp: Partial<TrustedIdpConfig> | null,
  where: string,
  asLoopback: boolean,
  operatorClients: Set<string>,
  dynamicAllowed: boolean,
): string[] {
  if (!idp || typeof idp !== 'object') return [`${where}: must be an object`];
  const problems: string[] = [];
  const allowHttp = (url: URL) => url.protocol === 'http:' && isLoopbackHost(url.hostname) && asLoopback;
  const issuer = typeof idp.issuer === 'string' ? parseUrl(idp.issuer) : undefined;
  if (!issuer) problems.push(`${where}.issuer: must be an absolute URL`);
  else if (issuer.protocol !== 'https:' && !allowHttp(issuer))
    problems.push(`${where}.issuer: must use https (http only for a loopback IdP on a loopback issuer, for development)`);
  if ((idp.jwksUri === undefined) === (idp.jwks === undefined)) problems.push(`${where}: set exactly one of jwksUri and jwks`);
  if (idp.jwksUri !== undefined) {
    const url = typeof idp.jwksUri === 'string' ? parseUrl(idp.jwksUri) : undefined;
    if (!url) problems.push(`${where}.jwksUri: must be an absolute URL`);
    else if (url.protocol !== 'https:' && !allowHttp(url))
      problems.push(`${where}.jwksUri: must use https (RFC 7517 §5; http only for a loopback IdP on a loopback issuer)`);
  }
  if (idp.jwks !== undefined) {
    const keys = (idp.jwks as { keys?: unknown } | null)?.keys;
    if (!Array.isArray(keys) || keys.length === 0) problems.push(`${where}.jwks: must be { keys: [ …public JWKs ] }`);
    else if (keys.some((k) => !k || typeof k !== 'object' || 'd' in k || (k as JWK).kty === 'oct'))
      problems.push(`${where}.jwks: only public asymmetric keys (no "d", no "oct")`);
  }
  if (!isStringList(idp.clients) || idp.clients.length === 0) {
    problems.push(`${where}.clients: must list the client_ids that may present this IdP's ID-JAGs`);
  } else if (!idp.clients.includes('*')) {
    for (const id of idp.clients)
      if (!operatorClients.has(id) && !/^https:\/\//.test(id) && !dynamicAllowed)
        problems.push(`${where}.clients: "${id}" is not a configured client (clients[]) nor a CIMD client_id`);
  }
  if (idp.algorithms !== undefined && (!isStringList(idp.algorithms) || idp.algorithms.some((a) => !ASYMMETRIC.test(a))))
    problems.push(`${where}.algorithms: must list asymmetric JWS algorithms (e.g. RS256, ES256; never none or HS*)`);
  if (idp.accountMatch !== undefined && idp.accountMatch !== 'subject' && idp.accountMatch !== 'email')
    problems.push(`${where}.accountMatch: must be "subject" or "email"`);
  if (idp.createAccounts !== undefined && typeof idp.createAccounts !== 'boolean')
    problems.push(`${where}.createAccounts: must be a boolean`);
  if (idp.verifiedEmail !== undefined && idp.verifiedEmail !== 'claim' && idp.verifiedEmail !== 'trusted')
    problems.push(`${where}.verifiedEmail: must be "claim" or "trusted"`);
  if (idp.emailDomains !== undefined && !isStringList(idp.emailDomains))
    problems.push(`${where}.emailDomains: must be an array of domains`);
  if (idp.verifiedEmail === 'trusted' && !(isStringList(idp.emailDomains) && idp.emailDomains.length))
    problems.push(`${where}.verifiedEmail: "trusted" needs emailDomains (which domains this IdP may vouch for)`);
  if (idp.allowPrivateNetwork !== undefined && typeof idp.allowPrivateNetwork !== 'boolean')
    problems.push(`${where}.allowPrivateNetwork: must be a boolean`);
  return problems;
}

/**
 * Problems of `idJag` (empty when valid). `asLoopback`: the AS issuer host is loopback;
 * `operatorClients`: the `client_id`s of `clients[]`.
 */
export function idJagConfigProblems(value: unknown, asLoopback: boolean, operatorClients: Set<string>): string[] {
  if (value === undefined) return [];
  if (!value || typeof value !== 'object') return ['idJag: must be an object { trustedIdps: [...] }'];
  const c = value as Partial<IdJagConfig>;
  const problems: string[] = [];
  if (!Array.isArray(c.trustedIdps) || c.trustedIdps.length === 0) {
    problems.push('idJag.trustedIdps: must list at least one trusted IdP { issuer, jwksUri | jwks, clients }');
  } else {
    const seen = new Set<string>();
    c.trustedIdps.forEach((idp, i) => {
      problems.push(
        ...idpProblems(
          idp,
          `idJag.trustedIdps[${i}]`,
          asLoopback,
          operatorClients,
          Array.isArray(c.allowClients) && c.allowClients.includes('dynamic'),
        ),
      );
      if (idp && typeof idp.issuer === 'string') {
        if (seen.has(idp.issuer)) problems.push(`idJag.trustedIdps[${i}].issuer: duplicate "${idp.issuer}"`);
        seen.add(idp.issuer);
      }
    });
  }
  if (c.refreshTokens !== undefined && typeof c.refreshTokens !== 'boolean') problems.push('idJag.refreshTokens: must be a boolean');
  if (c.allowClients !== undefined && (!Array.isArray(c.allowClients) || c.allowClients.some((s) => s !== 'dynamic' && s !== 'cimd')))
    problems.push('idJag.allowClients: must be an array of "dynamic" and "cimd"');
  for (const key of ['clockToleranceSeconds', 'maxAgeSeconds'] as const) {
    const v = c[key];
    if (v !== undefined && !(Number.isSafeInteger(v) && (v as number) >= (key === 'maxAgeSeconds' ? 1 : 0)))
      problems.push(`idJag.${key}: must be a ${key === 'maxAgeSeconds' ? 'positive' : 'non-negative'} integer (seconds)`);
  }
  return problems;
}
