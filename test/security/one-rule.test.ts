import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { walkSources } from '@mcp-auth-kit/test-utils';

/**
 * One rule, one place (issue 19: five loopback checks that disagreed on `::ffff:127.0.0.1` and
 * `127.0.0.2`, so the AS judged one issuer two ways). Address classes and redirect-URI schemes
 * are decided by @mcp-auth-kit/protocol only; this scan fails when another source file grows its
 * own copy again.
 */
const ROOT = join(import.meta.dirname, '..', '..');
const SOURCE_DIRS = ['packages', 'apps'];

const SKIP = ['node_modules', 'dist', 'test'];

const files = SOURCE_DIRS.flatMap((dir) => walkSources(join(ROOT, dir), { skip: SKIP }))
  .map((path) => ({ path: relative(ROOT, path), text: readFileSync(path, 'utf8') }))
  .filter(({ path }) => !path.startsWith('packages/protocol/'));

const COPIES: Array<[RegExp, string]> = [
  [/function\s+isLoopback\w*\s*\(/, 'a loopback predicate'],
  [
    /function\s+is(?:Private|SpecialUse|Reserved)\w*Address\w*\s*\(/,
    'a special-use address classifier (delegating wrappers excepted below)',
  ],
  [/\/\^?\\?\(?127\\\./, 'a 127/8 regular expression'],
  [/::ffff:/i, 'IPv4-mapped address parsing'],
  [
    /\[\s*'(?:localhost|127\.0\.0\.1|\[::1\]|::1)'[^\]]*\]\s*\.includes\(|new Set\(\[\s*'(?:localhost|127\.0\.0\.1|\[::1\]|::1)'/,
    'a literal list of loopback names used as a predicate',
  ],
  [/new BlockList\(|from 'ipaddr\.js'/, 'an address range table'],
  [/DANGEROUS_SCHEMES|'javascript:'\s*,\s*'data:'/, 'a redirect-scheme denylist'],
];

/** Wrappers that keep a documented public name but only delegate to the protocol package. */
const DELEGATING: Record<string, RegExp> = {
  'packages/client/src/network.ts':
    /export function isPrivateAddress\(address: string\): boolean \{\n\s*return classifyIpAddress\(address\) !== 'public';\n\}/,
};

describe('one rule, one place: address and redirect-scheme predicates live in @mcp-auth-kit/protocol', () => {
  it('the scan sees the sources (guards against a scan that checks nothing)', () => {
    expect(files.length).toBeGreaterThan(50);
    expect(files.some(({ path }) => path === 'packages/authorization-server/src/clients/client-policy.ts')).toBe(true);
  });

  for (const [pattern, what] of COPIES) {
    it(`no source outside packages/protocol defines ${what}`, () => {
      const offenders = files.filter(({ path, text }) => pattern.test(text) && !DELEGATING[path]?.test(text)).map(({ path }) => path);
      expect(offenders).toEqual([]);
    });
  }

  it('the loopback landmarks import the shared rule', () => {
    for (const path of [
      'packages/authorization-server/src/config/resolve.ts',
      'packages/authorization-server/src/clients/client-policy.ts',
      'packages/authorization-server/src/clients/cimd.ts',
      'packages/resource-server/src/config/resolve.ts',
      'packages/client/src/url.ts',
      'apps/auth-server/src/config.ts',
      'apps/auth-server/src/index.ts',
      'apps/demo-mcp-server/src/app.ts',
      // who can reach a listening server (dev switches, issue 46): isLoopbackListenAddress
      'packages/authorization-server/src/ops/dev-switches.ts',
    ]) {
      const file = files.find((f) => f.path === path);
      expect(file, path).toBeDefined();
      expect(file!.text, path).toMatch(/from '@mcp-auth-kit\/protocol'/);
    }
  });
});
