/**
 * Configuration of the Identity Assertion JWT Authorization Grant (ID-JAG, the RFC 7523 §2.1 JWT
 * bearer grant of MCP enterprise-managed authorization): which enterprise IdPs this server
 * trusts, which clients may present their ID-JAGs, and how their users map to local accounts.
 */
import type { JWK } from 'jose';
import { isSecurePeerUrl, parseUrl } from '../../http/urls.js';

import type { IdJagConfig, TrustedIdpConfig } from '../../config/types.js';

export type { IdJagAccountMatch, IdJagConfig, TrustedIdpConfig } from '../../config/types.js';

export { DEFAULT_ID_JAG_ALGORITHMS } from '../../config/defaults.js';

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
  const issuer = typeof idp.issuer === 'string' ? parseUrl(idp.issuer) : undefined;
  if (!issuer) problems.push(`${where}.issuer: must be an absolute URL`);
  else if (!isSecurePeerUrl(issuer, asLoopback))
    problems.push(`${where}.issuer: must use https (http only for a loopback IdP on a loopback issuer, for development)`);
  if ((idp.jwksUri === undefined) === (idp.jwks === undefined)) problems.push(`${where}: set exactly one of jwksUri and jwks`);
  if (idp.jwksUri !== undefined) {
    const url = typeof idp.jwksUri === 'string' ? parseUrl(idp.jwksUri) : undefined;
    if (!url) problems.push(`${where}.jwksUri: must be an absolute URL`);
    else if (!isSecurePeerUrl(url, asLoopback))
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
