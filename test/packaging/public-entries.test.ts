import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Each published entry exports what its package README's API section documents for users, no
 * more and no less (issue 43). The convention: the README has one `## API` section; in it, each
 * entry (every `exports` subpath of the package.json but `./package.json`) has a heading
 * `### \`@mcp-auth-kit/<package>[/<subpath>]\`` followed by a list with one line per run-time
 * name, `- \`name\` …`. Types are not listed: the entry's API report (`api/<entry>.api.md`,
 * checked by api-report.test.ts) shows them, with every signature.
 */
const ROOT = join(import.meta.dirname, '..', '..');
const readJson = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;

interface Entry {
  pkg: string;
  specifier: string;
  report: string;
}

function publishedEntries(): Entry[] {
  const workspaces = readJson(join(ROOT, 'package.json')).workspaces as string[];
  const entries: Entry[] = [];
  for (const ws of workspaces.filter((w) => w.startsWith('packages/'))) {
    const manifest = readJson(join(ROOT, ws, 'package.json'));
    if (manifest.private === true) continue;
    for (const subpath of Object.keys((manifest.exports ?? {}) as Record<string, unknown>)) {
      if (subpath === './package.json') continue;
      const pkg = ws.slice('packages/'.length);
      entries.push({
        pkg,
        specifier: `${manifest.name as string}${subpath === '.' ? '' : subpath.slice(1)}`,
        report: join(ROOT, ws, 'api', `${subpath === '.' ? 'index' : subpath.slice(2)}.api.md`),
      });
    }
  }
  return entries;
}

/** The README's `## API` section: for each `### \`<specifier>\`` heading, the names its list gives. */
function documentedEntries(readme: string): Map<string, string[]> {
  const lines = readme.split('\n');
  const start = lines.findIndex((line) => line.trim() === '## API');
  const entries = new Map<string, string[]>();
  if (start === -1) return entries;
  let current: string[] | undefined;
  let fenced = false;
  for (const line of lines.slice(start + 1)) {
    if (line.startsWith('```')) fenced = !fenced;
    if (fenced) continue;
    if (/^##\s/.test(line)) break;
    const heading = /^###\s+`(@mcp-auth-kit\/[^`]+)`\s*$/.exec(line);
    if (heading !== null) {
      current = [];
      entries.set(heading[1]!, current);
      continue;
    }
    if (/^###\s/.test(line)) {
      current = undefined;
      continue;
    }
    const item = /^- `([A-Za-z_$][\w$]*)/.exec(line);
    if (item !== null && current !== undefined) current.push(item[1]!);
  }
  return entries;
}

const ENTRIES = publishedEntries();

describe('public entries match their READMEs (issue 43)', () => {
  it('finds the published entries, each with its API report', () => {
    expect(ENTRIES.map((e) => e.specifier)).toEqual(
      expect.arrayContaining([
        '@mcp-auth-kit/protocol',
        '@mcp-auth-kit/resource-server',
        '@mcp-auth-kit/resource-server/core',
        '@mcp-auth-kit/client',
        '@mcp-auth-kit/testing',
      ]),
    );
    expect(ENTRIES.filter((e) => !existsSync(e.report)).map((e) => e.report)).toEqual([]);
  });

  for (const { pkg, specifier } of ENTRIES) {
    it(`${specifier}: the README's API section lists exactly its run-time exports`, async () => {
      const entry = (await import(specifier)) as Record<string, unknown>;
      const readme = readFileSync(join(ROOT, 'packages', pkg, 'README.md'), 'utf8');
      const listed = documentedEntries(readme).get(specifier);
      expect(listed, `packages/${pkg}/README.md has no "### \`${specifier}\`" list under "## API"`).toBeDefined();
      expect([...listed!].sort()).toEqual(Object.keys(entry).sort());
    });
  }

  it('every entry a README documents exists', () => {
    const specifiers = new Set(ENTRIES.map((e) => e.specifier));
    for (const pkg of new Set(ENTRIES.map((e) => e.pkg))) {
      const readme = readFileSync(join(ROOT, 'packages', pkg, 'README.md'), 'utf8');
      expect([...documentedEntries(readme).keys()].filter((s) => !specifiers.has(s))).toEqual([]);
    }
  });

  it('protocol is internal: no other entry re-exports its functions, classes or objects but ConfigError', async () => {
    const protocol = (await import('@mcp-auth-kit/protocol')) as Record<string, unknown>;
    const shared = new Map(
      Object.entries(protocol)
        .filter(([, value]) => typeof value === 'function' || (typeof value === 'object' && value !== null))
        .map(([name, value]) => [value, name]),
    );
    const reexported: string[] = [];
    for (const { specifier } of ENTRIES.filter((e) => e.pkg !== 'protocol')) {
      const entry = (await import(specifier)) as Record<string, unknown>;
      for (const [name, value] of Object.entries(entry)) {
        if (shared.has(value) && shared.get(value) !== 'ConfigError') reexported.push(`${specifier}: ${name}`);
      }
    }
    expect(reexported).toEqual([]);
  });

  it('the resource server entry stays small (issue 43: at most ~15 run-time names)', async () => {
    const entry = (await import('@mcp-auth-kit/resource-server')) as Record<string, unknown>;
    expect(Object.keys(entry).length).toBeLessThanOrEqual(15);
  });

  it('the parser reads names from the list under the entry heading only', () => {
    const readme = [
      '## Usage',
      '- `notThis`',
      '## API',
      '### `@mcp-auth-kit/x`',
      'Intro text.',
      '- `alpha` — first',
      '- `beta(options)` second',
      '```ts',
      '- `inFence`',
      '```',
      '### Details',
      '- `notListed`',
      '### `@mcp-auth-kit/x/core`',
      '- `gamma`',
      '## Later',
      '- `notEither`',
    ].join('\n');
    expect(Object.fromEntries(documentedEntries(readme))).toEqual({
      '@mcp-auth-kit/x': ['alpha', 'beta'],
      '@mcp-auth-kit/x/core': ['gamma'],
    });
  });
});
