/**
 * Configuration of third-party authorization (the token vault): the providers, which MCP servers
 * may use each, the vault's encryption keys, and which configured clients are MCP servers
 * (`clients[].resource`, the callers of the RFC 8693 token exchange).
 */
import { isScopeToken } from '@mcp-auth-kit/protocol';
import { DEFAULTS } from '../config/defaults.js';
import type { ClientMetadata, ResourceConfig, ThirdPartyConfig, ThirdPartyProviderConfig } from '../config/types.js';
import { DISPLAY_NAME_RULE, isDisplayName } from '../interactions/scope-text.js';
import { decodeKey32, KEY_32_RULE } from '../config/secret-key.js';
import { isSecurePeerUrl, parseUrl } from '../http/urls.js';

export type { ThirdPartyConfig, ThirdPartyProviderConfig } from '../config/types.js';

/** A provider's short name: the exchange's `audience`, a path-safe and log-safe token. */
export const PROVIDER_NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;
const AUTH_METHODS = ['client_secret_basic', 'client_secret_post', 'none'];
/** Upper bound of a connect URL's life (the user reads a prompt, opens a browser and signs in). */
const MAX_TICKET_TTL = 3600;

interface Context {
  /** The AS issuer host is loopback (development): http is allowed for loopback providers. */
  asLoopback: boolean;
  production: boolean;
  resources: ReadonlySet<string>;
}

function urlProblem(where: string, value: unknown, asLoopback: boolean): string | undefined {
  const url = typeof value === 'string' ? parseUrl(value) : undefined;
  if (!url) return `${where}: must be an absolute URL`;
  if (!isSecurePeerUrl(url, asLoopback))
    return `${where}: must use https (http only for a loopback provider on a loopback issuer, for development)`;
  if (url.hash || String(value).includes('#')) return `${where}: must not contain a fragment`;
  return undefined;
}

function endpointProblems(where: string, p: Partial<ThirdPartyProviderConfig>, c: Context): string[] {
  const problems: string[] = [];
  const explicit = p.authorizationEndpoint !== undefined || p.tokenEndpoint !== undefined;
  if (explicit && (p.authorizationEndpoint === undefined || p.tokenEndpoint === undefined))
    problems.push(`${where}: set both authorizationEndpoint and tokenEndpoint, or neither (discovery from issuer)`);
  if (!explicit && p.issuer === undefined) problems.push(`${where}: set issuer (discovery), or authorizationEndpoint and tokenEndpoint`);
  for (const key of ['issuer', 'authorizationEndpoint', 'tokenEndpoint', 'revocationEndpoint'] as const) {
    if (p[key] === undefined) continue;
    const problem = urlProblem(`${where}.${key}`, p[key], c.asLoopback);
    if (problem) problems.push(problem);
  }
  return problems;
}

function clientProblems(where: string, p: Partial<ThirdPartyProviderConfig>): string[] {
  const problems: string[] = [];
  if (typeof p.clientId !== 'string' || !p.clientId.trim())
    problems.push(`${where}.clientId: required (the AS's client id at the provider)`);
  if (p.clientSecret !== undefined && (typeof p.clientSecret !== 'string' || !p.clientSecret))
    problems.push(`${where}.clientSecret: must be a non-empty string`);
  const method = p.tokenEndpointAuthMethod;
  if (method !== undefined && !AUTH_METHODS.includes(method))
    problems.push(`${where}.tokenEndpointAuthMethod: must be one of ${AUTH_METHODS.join(', ')}`);
  else if (method === 'none' && p.clientSecret !== undefined)
    problems.push(`${where}.clientSecret: not used with tokenEndpointAuthMethod "none"; remove one`);
  else if (method !== 'none' && p.clientSecret === undefined)
    problems.push(
      `${where}.clientSecret: required for ${method ?? DEFAULTS.thirdParty.providers.tokenEndpointAuthMethod} (a public client at the provider: tokenEndpointAuthMethod "none")`,
    );
  return problems;
}

function providerProblems(name: string, value: unknown, c: Context): string[] {
  const where = `thirdParty.providers.${name}`;
  if (!PROVIDER_NAME.test(name)) return [`${where}: the name must match ${PROVIDER_NAME.source} (it is the token exchange's audience)`];
  if (!value || typeof value !== 'object' || Array.isArray(value)) return [`${where}: must be an object`];
  const p = value as Partial<ThirdPartyProviderConfig>;
  const problems = [...endpointProblems(where, p, c), ...clientProblems(where, p)];
  if (!Array.isArray(p.scopes) || p.scopes.some((s) => typeof s !== 'string' || !isScopeToken(s)))
    problems.push(`${where}.scopes: must be an array of scope tokens (RFC 6749 §3.3), [] for none`);
  if (!Array.isArray(p.resources) || p.resources.length === 0) {
    problems.push(`${where}.resources: must list the MCP servers (resources[].resource) that may use this provider`);
  } else {
    for (const r of p.resources)
      if (typeof r !== 'string' || !c.resources.has(r))
        problems.push(`${where}.resources: "${String(r)}" is not one of resources[].resource`);
  }
  if (p.displayName !== undefined && !isDisplayName(p.displayName)) problems.push(`${where}.displayName: ${DISPLAY_NAME_RULE}`);
  if (p.allowPrivateNetwork !== undefined && typeof p.allowPrivateNetwork !== 'boolean')
    problems.push(`${where}.allowPrivateNetwork: must be a boolean`);
  return problems;
}

function keyProblems(t: Partial<ThirdPartyConfig>, production: boolean): string[] {
  const problems: string[] = [];
  if (t.encryptionKey === undefined) {
    if (production)
      problems.push(
        `thirdParty.encryptionKey: required in production (provider tokens are encrypted at rest with it); ${KEY_32_RULE.replace(/^must be/, 'set')} (env THIRD_PARTY_ENCRYPTION_KEY)`,
      );
  } else if (!decodeKey32(t.encryptionKey)) problems.push(`thirdParty.encryptionKey: ${KEY_32_RULE}`);
  if (t.previousEncryptionKeys !== undefined) {
    if (!Array.isArray(t.previousEncryptionKeys)) problems.push('thirdParty.previousEncryptionKeys: must be an array of keys');
    else if (t.previousEncryptionKeys.some((k) => !decodeKey32(k))) problems.push(`thirdParty.previousEncryptionKeys: each ${KEY_32_RULE}`);
    else if (t.encryptionKey === undefined && t.previousEncryptionKeys.length)
      problems.push('thirdParty.previousEncryptionKeys: only with encryptionKey (the key new records are encrypted with)');
  }
  return problems;
}

/**
 * Problems of `thirdParty` (empty when valid or absent). `asLoopback`: the AS issuer host is
 * loopback; `production`: production mode (the encryption key is then required).
 */
export function thirdPartyConfigProblems(
  value: unknown,
  options: { asLoopback: boolean; production: boolean; resources: unknown },
): string[] {
  if (value === undefined) return [];
  if (!value || typeof value !== 'object' || Array.isArray(value))
    return ['thirdParty: must be an object { providers: { <name>: {...} } }'];
  const t = value as Partial<ThirdPartyConfig>;
  const resources = new Set(
    Array.isArray(options.resources) ? (options.resources as Array<Partial<ResourceConfig> | undefined>).map((r) => r?.resource) : [],
  );
  const c: Context = { asLoopback: options.asLoopback, production: options.production, resources: resources as Set<string> };
  const problems: string[] = [];
  const providers = t.providers;
  if (!providers || typeof providers !== 'object' || Array.isArray(providers) || Object.keys(providers).length === 0) {
    problems.push(
      'thirdParty.providers: must name at least one provider { <name>: { issuer | authorizationEndpoint + tokenEndpoint, clientId, … } }',
    );
  } else {
    for (const [name, provider] of Object.entries(providers)) problems.push(...providerProblems(name, provider, c));
  }
  problems.push(...keyProblems(t, options.production));
  const ttl = t.connectTicketTTL;
  if (ttl !== undefined && !(Number.isSafeInteger(ttl) && ttl >= 60 && ttl <= MAX_TICKET_TTL))
    problems.push(`thirdParty.connectTicketTTL: must be an integer from 60 to ${MAX_TICKET_TTL} (seconds)`);
  return problems;
}

/**
 * `clients[].resource`: the MCP server a configured client is. It must be a configured resource,
 * and the client confidential (RFC 8693 §2.1: the exchange authenticates the server) and not
 * registered for DPoP-bound tokens only (the exchange hands out the provider's token, which this
 * server cannot bind to a key, RFC 9449 §5.2).
 */
export function clientResourceProblems(clients: unknown, resources: unknown): string[] {
  if (!Array.isArray(clients)) return [];
  const known = new Set(Array.isArray(resources) ? (resources as Array<Partial<ResourceConfig> | undefined>).map((r) => r?.resource) : []);
  const problems: string[] = [];
  clients.forEach((client: Partial<ClientMetadata> | undefined, i) => {
    if (!client || typeof client !== 'object' || client.resource === undefined) return;
    const where = `clients[${i}].resource`;
    if (typeof client.resource !== 'string' || !known.has(client.resource)) {
      problems.push(`${where}: must be one of resources[].resource (the MCP server this client is)`);
      return;
    }
    if (client.token_endpoint_auth_method === 'none')
      problems.push(`${where}: a public client cannot exchange tokens; give it a secret (client_secret_basic) or private_key_jwt`);
    if (client.dpop_bound_access_tokens === true)
      problems.push(
        `${where}: not with dpop_bound_access_tokens (the exchange returns the provider's token, which cannot be bound to a DPoP key)`,
      );
  });
  return problems;
}
