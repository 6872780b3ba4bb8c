/**
 * Which client metadata each source may set: one allowlist, field by field, for every way a
 * client comes into being. Pure (no I/O, no oidc-provider), so the client policy hook, the
 * start-up config check and the token endpoint guard all ask the same table.
 *
 * Sources:
 * - `operator`      — `clients` in the server's configuration (trusted).
 * - `registration`  — an RFC 7591 DCR request body (anyone who can reach `/reg`).
 * - `client_update` — an RFC 7592 update body (the holder of a registration access token).
 * - `cimd`          — a fetched Client ID Metadata Document (anyone who owns an https URL).
 * - `stored`        — a DCR / RFC 7592 record read back from the store. It was checked when
 *                     written; it is checked again because the rules may have tightened since.
 *
 * | field                                   | operator | registration | client_update | cimd   | stored |
 * | --------------------------------------- | -------- | ------------ | ------------- | ------ | ------ |
 * | client_id                               | allow    | issued       | allow (1)     | allow (2) | allow |
 * | client_secret, client_secret_expires_at | allow    | issued       | issued        | reject (3) | allow |
 * | client_id_issued_at                     | allow    | issued       | issued        | drop   | allow  |
 * | client_name, client_uri, logo_uri, policy_uri, tos_uri, contacts | allow | allow | allow | allow | allow |
 * | redirect_uris, response_types, response_modes, application_type | allow | allow | allow | allow | allow |
 * | grant_types (values: see below)         | allow    | allow        | allow         | allow  | allow  |
 * | token_endpoint_auth_method, token_endpoint_auth_signing_alg, jwks, jwks_uri | allow | allow | allow | allow (3) | allow |
 * | scope (4)                               | allow    | allow        | allow         | allow  | allow  |
 * | id_token_signed_response_alg, require_auth_time, default_max_age, default_acr_values, subject_type | allow | allow | allow | allow | allow |
 * | dpop_bound_access_tokens, require_pushed_authorization_requests | allow | allow | allow | allow | allow |
 * | sector_identifier_uri, initiate_login_uri (5) | allow | drop       | drop          | drop   | drop   |
 * | mcp_resource_scope (internal, 6)        | reject   | reject       | reject        | reject | drop   |
 * | anything else (7)                       | drop     | drop         | drop          | drop   | drop   |
 *
 * allow = kept as sent (oidc-provider still validates the value); issued = the server's own value
 * replaces whatever was sent (oidc-provider does this before the policy runs); drop = removed
 * silently (the AS default applies); reject = `invalid_client_metadata` naming the field.
 * (1) must equal the client's id (oidc-provider). (2) must equal the document URL (oidc-provider).
 * (3) oidc-provider refuses secrets and shared-secret auth methods in documents (CIMD draft-02).
 * (4) resource scopes are split off: they are not an allowlist for user-delegated flows (MCP
 *     step-up asks for more later); only an operator client keeps them, as the limit of its client_credentials tokens.
 * (5) pairwise subjects and third-party-initiated login are not offered; from an untrusted source
 *     they would only make the AS fetch or store an attacker's URL.
 * (6) derived by the AS from an operator client's `scope`; set by hand it would widen the
 *     client's machine tokens. Records written before this rule lose it silently.
 * (7) oidc-provider strips metadata it does not recognise (RFC 7591 §2: ignore what is not
 *     understood), e.g. `software_id` or vendor fields.
 *
 * Grant values without a user (`client_credentials`, JWT / SAML bearer assertions) — RFC 6749
 * §4.4: only for confidential clients — are allowed to `operator` clients that authenticate
 * (auth method other than `none`); rejected from `registration`, `client_update` and `stored`;
 * dropped from a `cimd` document, which the client writes once for every AS it talks to (as
 * oidc-provider drops other grant values a document lists that this AS does not offer it), so the
 * client keeps its user-delegated flows here. Exception: the JWT bearer grant (ID-JAG, MCP
 * enterprise-managed authorization) is allowed to confidential clients of the sources the
 * operator names in `idJag.allowClients` (`MetadataPolicyOptions.jwtBearerSources`).
 */

export type MetadataSource = 'operator' | 'registration' | 'client_update' | 'cimd' | 'stored';
export type FieldRule = 'allow' | 'issued' | 'drop' | 'reject';

export const METADATA_SOURCES: readonly MetadataSource[] = ['operator', 'registration', 'client_update', 'cimd', 'stored'];

/** `token_endpoint_auth_method` of a client that names none (the provider's `clientDefaults`). */
export const DEFAULT_TOKEN_ENDPOINT_AUTH_METHOD = 'client_secret_basic';

/** Holds the resource scopes of an operator client (only used to limit client_credentials). */
export const RESOURCE_SCOPE_PROPERTY = 'mcp_resource_scope';

/** Grants that issue tokens with no user behind them (RFC 6749 §4.4, RFC 7521 §4.2). */
export const USERLESS_GRANTS: ReadonlySet<string> = new Set([
  'client_credentials',
  'urn:ietf:params:oauth:grant-type:jwt-bearer',
  'urn:ietf:params:oauth:grant-type:saml2-bearer',
]);

const JWT_BEARER_GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

export interface MetadataPolicyOptions {
  /**
   * Sources besides `operator` whose confidential clients may hold the JWT bearer grant (the
   * operator's `idJag.allowClients`: `dynamic` → registration, client_update, stored; `cimd`).
   */
  jwtBearerSources?: ReadonlySet<MetadataSource>;
}

type Row = Record<MetadataSource, FieldRule>;

const everywhere: Row = { operator: 'allow', registration: 'allow', client_update: 'allow', cimd: 'allow', stored: 'allow' };
const operatorOnly: Row = { operator: 'allow', registration: 'drop', client_update: 'drop', cimd: 'drop', stored: 'drop' };

const FIELD_RULES: Readonly<Record<string, Row>> = {
  client_id: { operator: 'allow', registration: 'issued', client_update: 'allow', cimd: 'allow', stored: 'allow' },
  client_secret: { operator: 'allow', registration: 'issued', client_update: 'issued', cimd: 'reject', stored: 'allow' },
  client_secret_expires_at: { operator: 'allow', registration: 'issued', client_update: 'issued', cimd: 'reject', stored: 'allow' },
  client_id_issued_at: { operator: 'allow', registration: 'issued', client_update: 'issued', cimd: 'drop', stored: 'allow' },
  client_name: everywhere,
  client_uri: everywhere,
  logo_uri: everywhere,
  policy_uri: everywhere,
  tos_uri: everywhere,
  contacts: everywhere,
  redirect_uris: everywhere,
  response_types: everywhere,
  response_modes: everywhere,
  application_type: everywhere,
  grant_types: everywhere,
  token_endpoint_auth_method: everywhere,
  token_endpoint_auth_signing_alg: everywhere,
  jwks: everywhere,
  jwks_uri: everywhere,
  scope: everywhere,
  id_token_signed_response_alg: everywhere,
  require_auth_time: everywhere,
  default_max_age: everywhere,
  default_acr_values: everywhere,
  subject_type: everywhere,
  dpop_bound_access_tokens: everywhere,
  require_pushed_authorization_requests: everywhere,
  sector_identifier_uri: operatorOnly,
  initiate_login_uri: operatorOnly,
  [RESOURCE_SCOPE_PROPERTY]: { operator: 'reject', registration: 'reject', client_update: 'reject', cimd: 'reject', stored: 'drop' },
};

/** The fields the table names (every other field is dropped). */
export const KNOWN_FIELDS: readonly string[] = Object.keys(FIELD_RULES);

/** What `source` may do with `field` (see the table above). */
export function fieldRule(source: MetadataSource, field: string): FieldRule {
  return Object.hasOwn(FIELD_RULES, field) ? FIELD_RULES[field]![source] : 'drop';
}

/** Whether a client of `source` with `authMethod` may hold a grant without a user. */
export function userlessGrantRule(source: MetadataSource, authMethod: unknown): Exclude<FieldRule, 'issued'> {
  switch (source) {
    case 'operator':
      return typeof authMethod === 'string' && authMethod !== 'none' ? 'allow' : 'reject';
    case 'cimd':
      return 'drop';
    default:
      return 'reject';
  }
}

function userlessRefusal(source: MetadataSource, grant: string): string {
  return source === 'operator'
    ? `${grant} needs client authentication (RFC 6749 §4.4): token_endpoint_auth_method must not be "none"`
    : `${grant} is only available to pre-registered clients`;
}

/**
 * Applies the table to `metadata` (as oidc-provider hands it over: recognised fields plus
 * defaults) in place: drops what must be dropped and returns the refusals, empty when accepted.
 * Fields the AS filled with defaults are all `allow` for every source, so a refusal always
 * names something the source sent.
 */
export function applyMetadataPolicy(
  source: MetadataSource,
  metadata: Record<string, unknown>,
  options: MetadataPolicyOptions = {},
): string[] {
  const refusals: string[] = [];
  for (const field of Object.keys(metadata)) {
    if (metadata[field] === undefined) continue;
    const rule = fieldRule(source, field);
    if (rule === 'drop') delete metadata[field];
    else if (rule === 'reject') refusals.push(fieldRefusal(source, field));
  }
  const grants = metadata.grant_types;
  if (Array.isArray(grants)) {
    const kept: unknown[] = [];
    for (const grant of grants) {
      if (typeof grant !== 'string' || !USERLESS_GRANTS.has(grant)) {
        kept.push(grant);
        continue;
      }
      const rule =
        grant === JWT_BEARER_GRANT && options.jwtBearerSources?.has(source)
          ? userlessGrantRule('operator', metadata.token_endpoint_auth_method)
          : userlessGrantRule(source, metadata.token_endpoint_auth_method);
      if (rule === 'allow') kept.push(grant);
      else if (rule === 'reject') refusals.push(userlessRefusal(source, grant));
    }
    if (kept.length !== grants.length) metadata.grant_types = kept;
  }
  return refusals;
}

function fieldRefusal(source: MetadataSource, field: string): string {
  if (field !== RESOURCE_SCOPE_PROPERTY) return `${field} must not be set by ${describeSource(source)}`;
  const hint = source === 'operator' ? '; list the resource scopes in scope instead' : '';
  return `${field} is internal to this server and cannot be set by ${describeSource(source)}${hint}`;
}

function describeSource(source: MetadataSource): string {
  switch (source) {
    case 'operator':
      return 'the configuration';
    case 'registration':
      return 'a registration request';
    case 'client_update':
      return 'a client update request';
    case 'cimd':
      return 'a client_id metadata document';
    case 'stored':
      return 'a stored client';
  }
}
