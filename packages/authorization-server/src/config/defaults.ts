/**
 * Every default of the authorization server's configuration, in one tree shaped like the
 * options. `resolve.ts` lays the caller's configuration over it once; features read the
 * resolved configuration and never restate a default. The README's option tables are checked
 * against this tree (test/config-readme.test.ts). Imports nothing of ours.
 */

const DAY = 24 * 3600;

/** What the AS advertises as `dpop_signing_alg_values_supported` and accepts, unless configured. */
// `string[]` as it was exported before (callers pass it as `dpop.algorithms`); resolve.ts copies it.
export const DEFAULT_DPOP_SIGNING_ALGS: string[] = ['ES256', 'EdDSA', 'Ed25519', 'PS256', 'RS256'];

/** ID-JAG signature algorithms accepted from a trusted IdP unless it lists its own. */
export const DEFAULT_ID_JAG_ALGORITHMS: readonly string[] = Object.freeze(['RS256', 'PS256', 'ES256', 'EdDSA']);

/** Consent-page descriptions of the OpenID Connect scopes this AS supports (`scopeDescriptions` overrides them). */
export const DEFAULT_SCOPE_DESCRIPTIONS: Readonly<Record<string, string>> = Object.freeze({
  openid: 'Know who you are (your account ID here)',
  profile: 'See your name and username',
  offline_access: 'Stay signed in: keep access while you are away, until you revoke it',
});

export const DEFAULTS = Object.freeze({
  accessTokenTTL: 300,
  sessionTTL: DAY,
  trustProxy: false,
  production: false,
  readinessTimeoutMs: 2000,
  refreshTokens: Object.freeze({ enabled: true, ttl: 14 * DAY, reuseGraceSeconds: 10 }),
  registration: Object.freeze({
    enabled: true,
    management: true,
    rateLimit: Object.freeze({ max: 20, windowSeconds: 3600 }),
    clientSecretTTL: 30 * DAY,
  }),
  cimd: Object.freeze({ enabled: true, allowPrivateNetwork: false }),
  dpop: Object.freeze({ enabled: true, requireNonce: false, algorithms: DEFAULT_DPOP_SIGNING_ALGS }),
  metrics: Object.freeze({ enabled: true, collectDefaultMetrics: false }),
  loginThrottle: Object.freeze({ perAddressAndUser: 10, perUser: 50, perAddress: 100, windowSeconds: 15 * 60 }),
  upstream: Object.freeze({ scopes: Object.freeze(['profile', 'email']) as readonly string[] }),
  idJag: Object.freeze({
    refreshTokens: false,
    allowClients: Object.freeze([]) as readonly string[],
    clockToleranceSeconds: 30,
    maxAgeSeconds: 600,
    trustedIdps: Object.freeze({ algorithms: DEFAULT_ID_JAG_ALGORITHMS }),
  }),
  thirdParty: Object.freeze({
    connectTicketTTL: 600,
    previousEncryptionKeys: Object.freeze([]) as readonly string[],
    providers: Object.freeze({ tokenEndpointAuthMethod: 'client_secret_basic' as const, allowPrivateNetwork: false }),
  }),
  audit: Object.freeze({ retentionDays: 90 }),
  console: Object.freeze({ maxAgeSeconds: 300 }),
  storage: Object.freeze({ dataDir: '.data', postgresSchema: 'mcp_auth_kit' }),
  /** Options of `pinoLogger()` (ops/pino-logger.ts), the JSON-lines `logger`. */
  pinoLogger: Object.freeze({ name: 'mcp-auth-kit', level: 'info' as const }),
  /** Options of `createRevocationOutbox` (revocation-outbox.ts), an embedder's part rather than the server's. */
  revocationOutbox: Object.freeze({ deliveryTimeoutMs: 2_000, republishIntervalMs: 30_000 }),
});

/** Seconds an ID token lives (not configurable; the admin tool's key retirement reads it). */
export const ID_TOKEN_TTL = 3600;
