import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Each package's public entry is what its README documents (issue 21): every runtime export of a
 * published package is named in that package's README, so nothing reaches users undocumented and
 * an export added for one test shows up here. Tests import internals by path instead.
 */
const ROOT = join(import.meta.dirname, '..', '..');
const PACKAGES = ['protocol', 'authorization-server', 'resource-server', 'client', 'testing'] as const;
/** Sub-path entries, documented in their package's README. */
const SUBPATHS = ['authorization-server/redis', 'resource-server/redis'] as const;

describe('public entries match their READMEs', () => {
  for (const path of [...PACKAGES, ...SUBPATHS]) {
    const name = path.split('/')[0]!;
    const minimum = path.includes('/') ? 0 : 3;
    it(`@mcp-auth-kit/${path}: every export is documented in packages/${name}/README.md`, async () => {
      const entry = (await import(`@mcp-auth-kit/${path}`)) as Record<string, unknown>;
      const readme = readFileSync(join(ROOT, 'packages', name, 'README.md'), 'utf8');
      const exports = Object.keys(entry);
      expect(exports.length).toBeGreaterThan(minimum);
      const undocumented = exports.filter((key) => !new RegExp(`\\b${key}\\b`).test(readme));
      expect(undocumented).toEqual([]);
    });
  }
});
