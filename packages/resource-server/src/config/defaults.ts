/**
 * Every default of the resource server's options, in one tree shaped like the options.
 * `resolve.ts` lays the caller's options over it once; features read the resolved options and
 * never restate a default. The building blocks that take options of their own
 * (`verifyJwtAccessToken`, `introspectAccessToken`, `createThirdPartyTokens`,
 * `createStateBinding`) read theirs from here too. The algorithm lists are in `verify-jwt.ts` and `dpop.ts`, where they are also the
 * allowed sets. Imports nothing of ours.
 */
export const DEFAULTS = Object.freeze({
  /** No scope needed beyond a valid token. */
  scopePolicy: Object.freeze({}),
  scopeHierarchy: Object.freeze({}),
  challengeScopes: 'required' as const,
  serveRootMetadata: true,
  /** Seconds of leeway for `exp` / `nbf`. */
  clockTolerance: 30,
  cache: Object.freeze({ maxEntries: 1000 }),
  jwks: Object.freeze({ cooldownMs: 30_000, cacheMaxAgeMs: 600_000, timeoutMs: 5_000, failureCooldownMs: 5_000 }),
  maxBodyBytes: 4 * 1024 * 1024,
  introspection: Object.freeze({
    authMethod: 'client_secret_basic' as const,
    cacheTtlSeconds: 60,
    introspectJwt: false,
    timeoutMs: 5_000,
  }),
  dpop: Object.freeze({
    required: false,
    maxAgeSeconds: 60,
    clockToleranceSeconds: 5,
    nonce: Object.freeze({ lifetimeSeconds: 300 }),
    replay: Object.freeze({ maxEntries: 100_000 }),
  }),
  thirdParty: Object.freeze({
    authMethod: 'client_secret_basic' as const,
    timeoutMs: 10_000,
    cache: Object.freeze({ maxEntries: 1000 }),
    expirySkewSeconds: 30,
  }),
  /** `createStateBinding` (not an option of the resource server: its own building block). */
  stateBinding: Object.freeze({ ttlSeconds: 3600 }),
});

/** Upper bounds of the numeric options (`between(0, max)` in schema.ts; none: any safe integer). */
export const LIMITS = Object.freeze({
  clockTolerance: 300,
  dpopMaxAgeSeconds: 600,
  dpopClockToleranceSeconds: 300,
  nonceLifetimeSeconds: 3600,
  introspectionTimeoutMs: 60_000,
  thirdPartyTimeoutMs: 60_000,
  expirySkewSeconds: 3600,
});
