/**
 * The shape of the client library's options as a zod schema: which options exist, their types
 * and ranges. Each zod issue becomes one line of the configuration error (`"path" message`).
 * The rules of MCP Authorization Server Binding (each credential names its issuer, an https
 * URL) are checked in `resolve.ts` by `credential-binding.ts`, which owns them.
 */
import { z } from 'zod';

const positive = z.custom<number>((v) => typeof v === 'number' && Number.isFinite(v) && v > 0, {
  error: 'must be a finite number greater than 0',
});
const whole = z.custom<number>((v) => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0, {
  error: 'must be a whole number of 0 or more',
});
const flag = z.boolean({ error: 'must be a boolean' });
const fn = z.custom<(...args: never[]) => unknown>((v) => typeof v === 'function', { error: 'must be a function' });

/** CIMD §client requirements: the client_id document is an https URL with a path. */
const clientMetadataUrl = z.custom<string>(
  (v) => {
    if (typeof v !== 'string' || !URL.canParse(v)) return false;
    const u = new URL(v);
    return u.protocol === 'https:' && u.pathname !== '/' && u.pathname !== '';
  },
  { error: 'must be an https URL with a path' },
);

/** Fields whose rules live in `credential-binding.ts` or need none: the schema only names them. */
const checkedElsewhere = z.unknown().optional();

export const optionsSchema = z.looseObject(
  {
    clientName: z.string({ error: 'is required' }).min(1, { error: 'is required' }),
    store: checkedElsewhere,
    openAuthorizationUrl: fn.optional(),
    loopback: z
      .looseObject({
        host: z.string({ error: 'must be a loopback host name or address' }).optional(),
        port: z.custom<number>((v) => Number.isSafeInteger(v) && (v as number) >= 0 && (v as number) <= 65535, {
          error: 'must be a port number (0: any)',
        }),
        path: z.string().startsWith('/', { error: 'must be a path starting with "/"' }).optional(),
      })
      .partial()
      .optional(),
    authorizationTimeoutMs: positive.optional(),
    clientMetadataUrl: clientMetadataUrl.optional(),
    preRegistered: checkedElsewhere,
    clientMetadata: z.record(z.string(), z.unknown(), { error: 'must be an object' }).optional(),
    applicationType: z.enum(['native', 'web'], { error: 'must be "native" or "web"' }).optional(),
    onRegistrationNeeded: fn.optional(),
    clientCredentials: checkedElsewhere,
    jwtBearer: checkedElsewhere,
    refreshTokens: flag.optional(),
    maxStepUpAttempts: whole.optional(),
    expirySkewSeconds: whole.optional(),
    requestTimeoutMs: positive.optional(),
    maxResponseBytes: positive.optional(),
    maxMessageBytes: positive.optional(),
    fetch: fn.optional(),
    allowInsecureRequests: flag.optional(),
    privateNetworks: z.enum(['auto', 'block', 'allow'], { error: 'must be "auto", "block" or "allow"' }).optional(),
    blockPrivateNetworks: flag.optional(),
    dpop: z.enum(['auto', 'always', 'never'], { error: 'must be "auto", "always" or "never"' }).optional(),
    legacyDiscovery: flag.optional(),
    onEvent: fn.optional(),
  },
  { error: 'must be an object' },
);

function pathOf(path: readonly PropertyKey[]): string {
  return path.reduce<string>((at, key) => (typeof key === 'number' ? `${at}[${key}]` : at ? `${at}.${String(key)}` : String(key)), '');
}

/** One line per issue, in the client's own wording: `"requestTimeoutMs" must be …`. */
export function schemaProblems(value: unknown): string[] {
  const result = optionsSchema.safeParse(value);
  if (result.success) return [];
  return result.error.issues.map((issue) => (issue.path.length ? `"${pathOf(issue.path)}" ${issue.message}` : `options ${issue.message}`));
}
