// The shared headless browser under the names these tests were written with; the next commit
// renames the call sites and deletes this file.
export { HeadlessBrowser as UserAgent, isUrl, type BrowserPage as Page } from '@mcp-auth-kit/test-utils';
