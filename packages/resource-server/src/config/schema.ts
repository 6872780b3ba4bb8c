/**
 * The shape of the resource server's options as a zod schema: which options exist, their types
 * and ranges. Each zod issue becomes one line of the ConfigError (`path message`). Rules that need
 * a protocol predicate or another option (the resource URI, issuers, scope tokens, algorithm
 * lists, origins, hosts, DPoP `htu` and nonce secret, the token endpoint) are checked in
 * `resolve.ts`, by the module that owns the rule.
 */
import { z } from 'zod';
import { LIMITS } from './defaults.js';

const between = (min: number, max = Number.MAX_SAFE_INTEGER, unit = '') =>
  z.custom<number>((v) => typeof v === 'number' && Number.isFinite(v) && v >= min && v <= max, {
    error: `must be a number${unit} between ${min} and ${max}`,
  });
const count = between(0);
const flag = z.boolean({ error: 'must be a boolean' });
const fn = z.custom<(...args: never[]) => unknown>((v) => typeof v === 'function', { error: 'must be a function' });
const url = z.custom<string>((v) => typeof v === 'string' && URL.canParse(v), { error: 'must be a URL' });
const list = (error = 'must be an array') => z.array(z.unknown(), { error });
const secretMethod = z.enum(['client_secret_basic', 'client_secret_post'], {
  error: 'must be client_secret_basic or client_secret_post',
});
const nonEmpty = z.string({ error: 'must be a non-empty string' }).min(1, { error: 'must be a non-empty string' });
const cache = z.union([z.literal(false), z.looseObject({ maxEntries: count.optional() })], {
  error: 'must be false or an object',
});

/** Fields whose rules live in `resolve.ts` or need none: the schema only names them. */
const checkedElsewhere = z.unknown().optional();

const dpopSchema = z.looseObject({
  required: flag.optional(),
  algorithms: list().min(1, { error: 'must not be empty' }).optional(),
  maxAgeSeconds: between(0, LIMITS.dpopMaxAgeSeconds).optional(),
  clockToleranceSeconds: between(0, LIMITS.dpopClockToleranceSeconds).optional(),
  nonce: z
    .union([flag, z.looseObject({ secret: checkedElsewhere, lifetimeSeconds: between(0, LIMITS.nonceLifetimeSeconds).optional() })], {
      error: 'must be a boolean or an object',
    })
    .optional(),
  replay: z
    .union(
      [
        z.custom((v) => typeof (v as { add?: unknown } | null)?.add === 'function', { error: 'must be a DpopReplayStore' }),
        z.looseObject({ maxEntries: between(1).optional() }),
      ],
      { error: 'must be a DpopReplayStore or { maxEntries }' },
    )
    .optional(),
  publicUrl: z
    .union([z.string(), list().min(1, { error: 'must not be empty' })], { error: 'must be a URL or an array of URLs' })
    .optional(),
});

/** {@link ThirdPartyOptions}: also the options of `createThirdPartyTokens` (without a prefix). */
export const thirdPartySchema = z.looseObject(
  {
    clientId: nonEmpty,
    clientSecret: nonEmpty,
    authMethod: secretMethod.optional(),
    tokenEndpoint: checkedElsewhere,
    timeoutMs: between(1, LIMITS.thirdPartyTimeoutMs).optional(),
    cache: cache.optional(),
    expirySkewSeconds: between(0, LIMITS.expirySkewSeconds).optional(),
  },
  { error: 'must be an object' },
);

const introspectionSchema = z.looseObject(
  {
    endpoint: url,
    clientId: z.string({ error: 'is required (a string)' }),
    clientSecret: z.string({ error: 'is required (a string)' }),
    authMethod: secretMethod.optional(),
    cacheTtlSeconds: count.optional(),
    introspectJwt: flag.optional(),
    timeoutMs: between(1, LIMITS.introspectionTimeoutMs, ' of milliseconds').optional(),
  },
  { error: 'must be an object' },
);

export const optionsSchema = z.looseObject({
  resource: checkedElsewhere,
  authorizationServers: checkedElsewhere,
  scopesSupported: checkedElsewhere,
  scopePolicy: checkedElsewhere,
  scopeHierarchy: checkedElsewhere,
  challengeScopes: checkedElsewhere,
  allowedOrigins: list().optional(),
  allowedHosts: list().optional(),
  resourceName: checkedElsewhere,
  resourceDocumentation: url.optional(),
  extraMetadata: checkedElsewhere,
  serveRootMetadata: flag.optional(),
  realm: checkedElsewhere,
  algorithms: list().min(1, { error: 'must not be empty' }).optional(),
  clockTolerance: between(0, LIMITS.clockTolerance).optional(),
  revocation: z
    .custom((v) => typeof (v as { isRevoked?: unknown } | null)?.isRevoked === 'function', {
      error: 'must have an isRevoked(grantId) method',
    })
    .optional(),
  cache: cache.optional(),
  jwks: z
    .looseObject({
      cooldownMs: count.optional(),
      cacheMaxAgeMs: count.optional(),
      timeoutMs: count.optional(),
      failureCooldownMs: count.optional(),
      uris: z.record(z.string(), url, { error: 'must map issuers to JWKS URLs' }).optional(),
    })
    .optional(),
  introspection: introspectionSchema.optional(),
  maxBodyBytes: count.optional(),
  logger: checkedElsewhere,
  fetch: fn.optional(),
  now: fn.optional(),
  dpop: z.union([flag, dpopSchema], { error: 'must be a boolean or an object' }).optional(),
  thirdParty: thirdPartySchema.optional(),
});

type Issue = z.core.$ZodIssue;

function joinPath(prefix: string, path: readonly PropertyKey[]): string {
  return path.reduce<string>((at, key) => (typeof key === 'number' ? `${at}[${key}]` : at ? `${at}.${String(key)}` : String(key)), prefix);
}

/**
 * One line per issue. A union (`dpop: true | {…}`) that failed because of a field inside the
 * object branch reports that field, not "must be a boolean or an object": the branch whose
 * issues are all below the union's own value is the one the caller meant.
 */
function issueLines(issue: Issue, prefix: string): string[] {
  const path = joinPath(prefix, issue.path);
  if (issue.code === 'invalid_union') {
    const meant = issue.errors.find((branch) => branch.length > 0 && branch.every((inner) => inner.path.length > 0));
    if (meant) return meant.flatMap((inner) => issueLines(inner, path));
  }
  return [`${path || 'options'} ${issue.message}`];
}

/** Every shape problem of `value` against `schema`, named from `prefix` (`''`: top-level options). */
export function schemaProblems(schema: z.ZodType, value: unknown, prefix = ''): string[] {
  const result = schema.safeParse(value);
  return result.success ? [] : result.error.issues.flatMap((issue) => issueLines(issue, prefix));
}
