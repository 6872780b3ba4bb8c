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

describe('public entries match their READMEs', () => {
  for (const name of PACKAGES) {
    it(`@mcp-auth-kit/${name}: every export is documented in packages/${name}/README.md`, async () => {
      const entry = (await import(`@mcp-auth-kit/${name}`)) as Record<string, unknown>;
      const readme = readFileSync(join(ROOT, 'packages', name, 'README.md'), 'utf8');
      const exports = Object.keys(entry);
      expect(exports.length).toBeGreaterThan(3);
      const undocumented = exports.filter((key) => !new RegExp(`\\b${key}\\b`).test(readme));
      expect(undocumented).toEqual([]);
    });
  }
});
