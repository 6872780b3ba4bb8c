import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { walkSources } from '@mcp-auth-kit/test-utils';

/**
 * Source comments say why the code is as it is, not how fast it was in which benchmark run
 * (issue 43): a comment that cites "bench README, Eighth pass" or "the development VM" goes stale
 * with the next run and sends the reader to a lab notebook. Benchmark history lives in
 * bench/HISTORY.md; a cost that justifies a design is stated as a current fact. Pointers to a
 * benchmark case ("bench case 1b") stay allowed: the case is current and says what measures it.
 */
const ROOT = join(import.meta.dirname, '..', '..');
const SOURCE_DIRS = ['packages', 'apps', 'test-utils', 'scripts'];

const isSource = (path: string) => (path.endsWith('.ts') || path.endsWith('.mjs')) && !path.endsWith('.d.ts');

const files = SOURCE_DIRS.flatMap((dir) => walkSources(join(ROOT, dir), { keep: isSource, skip: ['node_modules', 'dist'] })).map(
  (path) => ({
    path: relative(ROOT, path),
    text: readFileSync(path, 'utf8'),
  }),
);

const ORDINAL = 'first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|thirteenth|fourteenth|fifteenth';

const HISTORY: Array<[RegExp, string]> = [
  [/bench(?:mark)?s?\s+README/i, 'a pointer into the benchmark notebook ("bench README")'],
  [new RegExp(`\\b(?:${ORDINAL})\\s+pass\\b`, 'i'), 'a benchmark pass ("Twelfth pass")'],
  [/\bVM\b(?!\s+context)/, 'the machine a run was made on ("the development VM"); a VM context is code, not history'],
  [/\bmeasured (?:on|at)\b/i, 'a measurement of one run ("measured on …")'],
];

describe('source comments hold the present, not benchmark history', () => {
  it('the scan sees the sources (guards against a scan that checks nothing)', () => {
    expect(files.length).toBeGreaterThan(200);
    expect(files.some(({ path }) => path === 'packages/resource-server/src/verify-jwt.ts')).toBe(true);
    expect(files.some(({ path }) => path.startsWith('scripts/') && path.endsWith('.mjs'))).toBe(true);
  });

  for (const [pattern, what] of HISTORY) {
    it(`no source names ${what}`, () => {
      const offenders = files.flatMap(({ path, text }) =>
        text
          .split('\n')
          .map((line, i) => (pattern.test(line) ? `${path}:${i + 1}: ${line.trim()}` : undefined))
          .filter((hit): hit is string => hit !== undefined),
      );
      expect(offenders).toEqual([]);
    });
  }

  it('the patterns catch what they are for (each refuses a comment of the old kind)', () => {
    const samples = [
      ' * it (bench README, Eighth pass). The signing key',
      '    // 32 concurrent exchanges on a 2-vCPU VM (bench README, eleventh pass).',
      ' * system calls (measured on the development VM: a model row upsert 20–35 µs',
    ];
    const caught = (line: string) => HISTORY.some(([pattern]) => pattern.test(line));
    for (const sample of samples) expect(caught(sample), sample).toBe(true);
    expect(caught(" * undefined where Node's undici cannot be reached (e.g. jest's VM context)")).toBe(false);
  });
});
