export {
  HeadlessBrowser,
  isUrl,
  matchesRedirectUri,
  type BrowserPage,
  type HeadlessBrowserOptions,
  type StopAt,
  type StoredCookie,
} from './headless-browser.js';
// one parser for the testing kit and the repository's tests (protocol has no dependencies)
export { parseForm, decodeEntities, type ParsedForm } from '@mcp-auth-kit/protocol';
export { pkcePair } from './pkce.js';
export { freePort, isListening } from './ports.js';
export { redisAnswers, shouldRunRedisTests, TEST_REDIS_URL } from './redis.js';
export { respeltSignature } from './jws.js';
export { isTypeScriptSource, walkSources, type WalkSourcesOptions } from './repo-sources.js';
export { expectOAuthError, type ErrorResponse } from './oauth-error-response.js';
export { configProblemsOf, rejectionOf, thrownBy } from './thrown.js';
export { ancestors, missingRows, optionRows, schemaPaths, shown, wrongDefaults, type OptionSchema } from './option-tables.js';
