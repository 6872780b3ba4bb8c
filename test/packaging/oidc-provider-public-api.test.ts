import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { walkSources } from '@mcp-auth-kit/test-utils';

/**
 * oidc-provider is a caret dependency (issue 21): the kit uses its public entry only. Its
 * `lib/` files (`lib/helpers/weak_cache.js`, `lib/helpers/grants.js`, …) are its private
 * implementation, which a minor release may change without notice; a source that imports them,
 * statically, dynamically or through a specifier built at run time, ties the AS to one version.
 * Tests may look inside only where named below, with the reason: a look that fails on an
 * upgrade is then the point of the test.
 */
const ROOT = join(import.meta.dirname, '..', '..');
const SOURCE_DIRS = ['packages', 'apps', 'examples', 'bench'];

const isSource = (path: string) => /\.(?:ts|mts|js|mjs)$/.test(path) && !path.endsWith('.d.ts');

const files = SOURCE_DIRS.flatMap((dir) => walkSources(join(ROOT, dir), { keep: isSource, skip: ['node_modules', 'dist'] })).map(
  (path) => ({
    path: relative(ROOT, path),
    text: readFileSync(path, 'utf8'),
  }),
);

const TEST_ONLY_LOOKS: Record<string, string> = {
  // Fails when an oidc-provider release recognises a client field the metadata policy has not decided.
  'packages/authorization-server/test/client-metadata-policy.test.ts': 'RECOGNIZED_METADATA drift check',
};

/** Any string naming a file under oidc-provider's `lib/` (the form an import specifier takes). */
const PRIVATE_PATH = /['"`]oidc-provider\/lib\//;

describe("oidc-provider's public API only", () => {
  it('the scan sees the sources, tests included (guards against a scan that checks nothing)', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(files.some(({ path }) => path === 'packages/authorization-server/src/tokens/refresh-grace.ts')).toBe(true);
    expect(files.some(({ path }) => path === 'packages/authorization-server/test/refresh-grace.test.ts')).toBe(true);
  });

  it('the pattern catches the forms an import of a private file takes', () => {
    for (const form of [
      "import instance from 'oidc-provider/lib/helpers/weak_cache.js';",
      'await import("oidc-provider/lib/helpers/grants.js")',
      "const grantsModule = 'oidc-provider/lib/helpers/grants.js';",
      'require(`oidc-provider/lib/index.js`)',
    ]) {
      expect(PRIVATE_PATH.test(form), form).toBe(true);
    }
    expect(PRIVATE_PATH.test("import Provider, { errors } from 'oidc-provider';")).toBe(false);
  });

  it("no source, test or benchmark file imports a file from oidc-provider's lib/ (named test-only looks excepted)", () => {
    const offenders = files.filter(({ path, text }) => PRIVATE_PATH.test(text) && !TEST_ONLY_LOOKS[path]).map(({ path }) => path);
    expect(offenders).toEqual([]);
    // An exception is a test file, and still needs its look (a stale entry is removed).
    for (const path of Object.keys(TEST_ONLY_LOOKS)) {
      expect(path).toMatch(/\/test\/.*\.test\.ts$/);
      expect(PRIVATE_PATH.test(files.find((f) => f.path === path)?.text ?? ''), path).toBe(true);
    }
  });

  it('the authorization server allows any oidc-provider 9 from 9.13.3 on (a caret range)', () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'packages/authorization-server/package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    expect(manifest.dependencies['oidc-provider']).toBe('^9.13.3');
  });
});
