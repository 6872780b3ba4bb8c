/**
 * Every default of the client library's options, in one tree shaped like the options.
 * `resolve.ts` lays the caller's options over it once; the client's parts read the resolved
 * options and never restate a default. The helpers with options of their own (the loopback
 * listener, the file store, DPoP keys, CIMD documents, HTTP limits) read theirs from here too.
 * Imports nothing of ours.
 */
export const DEFAULTS = Object.freeze({
  authorizationTimeoutMs: 300_000,
  refreshTokens: true,
  maxStepUpAttempts: 2,
  expirySkewSeconds: 30,
  requestTimeoutMs: 30_000,
  maxResponseBytes: 1024 * 1024,
  maxMessageBytes: 8 * 1024 * 1024,
  allowInsecureRequests: false,
  privateNetworks: 'auto' as const,
  dpop: 'auto' as const,
  legacyDiscovery: false,
  /** RFC 8252 §7.3: a loopback interface (never `0.0.0.0`), an ephemeral port. */
  loopback: Object.freeze({ host: '127.0.0.1', port: 0, path: '/callback' }),
  /** `FileStore`: how long to wait for another process's lock on the file. */
  fileStore: Object.freeze({ lockWaitMs: 60_000 }),
  /** The JWS algorithm of a `private_key_jwt` key given without `alg`. */
  privateKeyAlg: 'ES256' as const,
  /** `createUrlElicitation`: the wait for a page's completion, and the retries of one request. */
  urlElicitation: Object.freeze({ completionTimeoutMs: 300_000, maxRetries: 3 }),
  /** `enterpriseSignIn`: the scope asked of the IdP (an ID Token is what it is for). */
  enterpriseSignIn: Object.freeze({ scope: 'openid' }),
  /** `checkDeployment`: the request budget of one run, its overall deadline, and each request's. */
  doctor: Object.freeze({ maxRequests: 40, timeoutMs: 60_000, requestTimeoutMs: 10_000 }),
  /** `buildClientMetadataDocument`. */
  cimd: Object.freeze({ grantTypes: Object.freeze(['authorization_code', 'refresh_token']) as readonly string[] }),
});
