/**
 * The shape of the authorization server's configuration as a zod schema: which options exist,
 * their types and ranges. Each zod issue becomes one line of the ConfigError (`path: message`).
 * Rules that need more than one option or a protocol predicate (the issuer, scope tokens,
 * redirect schemes, dev switches, production, client metadata, DPoP, upstream and ID-JAG)
 * are checked in `resolve.ts` by the module that owns the rule. The README's option tables are
 * checked against this schema's keys and `defaults.ts` (test/config-readme.test.ts).
 */
import { z } from 'zod';

const isPositiveInt = (v: unknown): boolean => typeof v === 'number' && Number.isSafeInteger(v) && v > 0;

const positiveInt = (message: string) => z.custom<number>(isPositiveInt, { error: message });
const seconds = positiveInt('must be a positive integer (seconds)');
const flag = z.boolean({ error: 'must be a boolean' });
const hostPatterns = z.array(z.string().trim().min(1), { error: 'must be an array of host patterns' });

/** Fields whose own rules live in a feature module: the schema only names them (README check). */
const checkedElsewhere = z.unknown().optional();

export const resourceSchema = z.looseObject({
  resource: checkedElsewhere,
  name: checkedElsewhere,
  scopes: checkedElsewhere,
  accessTokenTTL: seconds.optional(),
  defaultScopes: checkedElsewhere,
  introspectionClients: checkedElsewhere,
});

const registrationSchema = z.looseObject({
  enabled: flag.optional(),
  initialAccessToken: z
    .string({ error: 'must be a string of at least 16 characters' })
    .min(16, { error: 'must be a string of at least 16 characters' })
    .optional(),
  rateLimit: z
    .union([z.literal(false), z.looseObject({ max: z.custom<number>(isPositiveInt), windowSeconds: z.custom<number>(isPositiveInt) })], {
      error: 'max and windowSeconds must be positive integers',
    })
    .optional(),
  clientSecretTTL: z
    .custom<number>((v) => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0, {
      error: 'must be a non-negative integer (seconds; 0 = never)',
    })
    .optional(),
  management: flag.optional(),
});

const cimdSchema = z.looseObject({
  enabled: flag.optional(),
  allowPrivateNetwork: flag.optional(),
  allowedHosts: hostPatterns.optional(),
  deniedHosts: hostPatterns.optional(),
  extraCaCertificates: z.string({ error: 'must be PEM text' }).optional(),
});

const refreshTokensSchema = z.looseObject({
  enabled: flag.optional(),
  ttl: seconds.optional(),
  // range and meaning: refresh-grace.ts (refreshGraceConfigProblems)
  reuseGraceSeconds: checkedElsewhere,
});

const loginThrottleSchema = z.strictObject(
  {
    perAddressAndUser: positiveInt('must be a positive integer').optional(),
    perUser: positiveInt('must be a positive integer').optional(),
    perAddress: positiveInt('must be a positive integer').optional(),
    windowSeconds: positiveInt('must be a positive integer').optional(),
  },
  { error: 'must be an object of positive integers' },
);

const metricsSchema = z.looseObject({
  enabled: flag.optional(),
  collectDefaultMetrics: flag.optional(),
  token: z
    .string({ error: 'must be a string of at least 16 characters' })
    .min(16, { error: 'must be a string of at least 16 characters' })
    .optional(),
});

const dpopSchema = z.looseObject(
  {
    enabled: flag.optional(),
    requireNonce: flag.optional(),
    // key format and algorithm list: dpop.ts (dpopConfigProblems)
    nonceSecret: checkedElsewhere,
    algorithms: checkedElsewhere,
  },
  { error: 'must be an object' },
);

const userSchema = z.looseObject({
  username: z.string({ error: 'required' }).trim().min(1, { error: 'required' }),
  password: z.string({ error: 'at least 8 characters' }).min(8, { error: 'at least 8 characters' }),
  displayName: z.string().optional(),
  source: z.literal('demo', { error: "only 'demo' (the public demo account), or leave it out" }).optional(),
});

const auditSchema = z.strictObject(
  { retentionDays: positiveInt('must be a positive integer (days)').optional() },
  { error: 'must be an object' },
);

const consoleSchema = z.strictObject(
  {
    path: z.string({ error: 'must be a path such as /console' }).regex(/^\/[A-Za-z0-9._~-]+(?:\/[A-Za-z0-9._~-]+)*$/, {
      error: 'must be a path such as /console (letters, digits, . _ ~ -, no trailing slash)',
    }),
    maxAgeSeconds: seconds.optional(),
    firstAdmin: z.string({ error: 'must be a username' }).trim().min(1, { error: 'must be a username' }).optional(),
  },
  { error: 'must be an object with a path' },
);

export const configSchema = z.looseObject({
  issuer: checkedElsewhere,
  resources: checkedElsewhere,
  storage: checkedElsewhere,
  clients: checkedElsewhere,
  registration: registrationSchema.optional(),
  cimd: cimdSchema.optional(),
  devAutoLogin: z.string({ error: 'must be a username' }).trim().min(1, { error: 'must be a username' }).optional(),
  users: z.array(userSchema, { error: 'must be an array' }).optional(),
  accessTokenTTL: seconds.optional(),
  refreshTokens: refreshTokensSchema.optional(),
  sessionTTL: seconds.optional(),
  trustProxy: checkedElsewhere,
  dpop: dpopSchema.optional(),
  serviceName: z.string({ error: 'must be a string' }).optional(),
  scopeDescriptions: checkedElsewhere,
  upstream: checkedElsewhere,
  redirectUris: checkedElsewhere,
  loginThrottle: loginThrottleSchema.optional(),
  logger: checkedElsewhere,
  production: flag.optional(),
  metrics: metricsSchema.optional(),
  listenHosts: z.array(z.string(), { error: 'must be an array of the addresses the server listens on' }).optional(),
  readinessTimeoutMs: positiveInt('must be a positive integer (milliseconds)').optional(),
  idJag: checkedElsewhere,
  // providers, keys and their rules: third-party/config.ts (thirdPartyConfigProblems)
  thirdParty: checkedElsewhere,
  audit: auditSchema.optional(),
  console: consoleSchema.optional(),
});

/** The schema's problems, one `path: message` line per zod issue. */
export function schemaProblems(config: unknown): string[] {
  const result = configSchema.safeParse(config);
  if (result.success) return [];
  return result.error.issues.flatMap((issue) => {
    const path = issue.path.reduce<string>(
      (at, key) => (typeof key === 'number' ? `${at}[${key}]` : at ? `${at}.${String(key)}` : String(key)),
      '',
    );
    // A strict object's unknown keys come as one issue: one line per key, as for every other field.
    if (issue.code === 'unrecognized_keys') return issue.keys.map((key) => `${path}.${key}: unknown field`);
    return [`${path}: ${issue.message}`];
  });
}
