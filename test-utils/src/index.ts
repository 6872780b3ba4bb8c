export {
  HeadlessBrowser,
  isUrl,
  matchesRedirectUri,
  type BrowserPage,
  type HeadlessBrowserOptions,
  type StopAt,
  type StoredCookie,
} from './headless-browser.js';
export { parseForm, decodeEntities, type ParsedForm } from './html-form.js';
export { pkcePair, s256Challenge } from './pkce.js';
export { freePort, isListening } from './ports.js';
export { redisAnswers, shouldRunRedisTests, TEST_REDIS_URL } from './redis.js';
