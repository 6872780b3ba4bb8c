import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * ARCHITECTURE.md stays true (issue 43: it was wrong in four places — test-utils' dependencies,
 * where the CLI's code lives, where body errors are answered, where `rate-limit.ts` lives).
 * Checked here, against the working tree:
 * - every file or folder the page names exists: in a row of "Where each rule lives", a bare name
 *   is a file next to the row's last full path (so `throttle.ts`, `rate-limit.ts` after
 *   `…/interactions/` must be in `interactions/`); in prose, a bare name is under the package the
 *   paragraph is about;
 * - the dependency table is what each workspace's package.json declares, and what its sources
 *   import of ours (so the diagram's arrows and "test-utils depends only on protocol" hold);
 * - the "never" rules: no source reaches into another workspace by path, every
 *   `@mcp-auth-kit/<name>/<subpath>` import is a public entry of that package, and test-utils is
 *   never a run-time dependency of anything.
 * Rows added for new modules pass as long as the files they name exist.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DOC = readFileSync(join(ROOT, 'ARCHITECTURE.md'), 'utf8');

/** Tracked and new (not ignored) files: what a commit of this tree holds, without node_modules or dist. */
const FILES = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' })
  .split('\n')
  .filter(Boolean);
/** `a/b/c.ts` → `a`, `a/b`. */
const folders = (file: string) => {
  const parts = file.split('/').slice(0, -1);
  return parts.map((_, i) => parts.slice(0, i + 1).join('/'));
};
const DIRS = new Set(FILES.flatMap(folders));
const TOP = new Set(FILES.map((f) => f.split('/')[0]!));

const exists = (path: string) => {
  const p = posix.normalize(path).replace(/\/$/, '');
  return FILES.includes(p) || DIRS.has(p);
};

/** Names in backticks that are not paths of this repository, and why. */
const NOT_OURS: Record<string, string> = {
  'lib/': "oidc-provider's internal folder (the AS never imports from it)",
  'helpers/': 'the helpers folder of any test directory (a convention, not one folder)',
};

function codeSpans(text: string): string[] {
  return [...text.matchAll(/`([^`\n]+)`/g)].map((m) => m[1]!.trim());
}
const rooted = (t: string) => TOP.has(t.split('/')[0]!);
function isPath(t: string): boolean {
  // not paths: URL paths (`/reg`), subpaths (`./cli`), package names, URNs, media types, globs
  if (/[\s:*=]/.test(t) || /^[./@]/.test(t) || /^(application|text|image|multipart)\//.test(t)) return false;
  return rooted(t) || t.includes('/') || /\.(ts|mts|mjs|js|md|json|ya?ml)$/.test(t);
}
/** The folder a rooted path stands for: itself when a folder, else the folder holding it. */
const folderOf = (t: string) => (DIRS.has(t.replace(/\/$/, '')) ? t.replace(/\/$/, '') : posix.dirname(t));

/** Markdown between `## heading` and the next `## `. */
function section(heading: string): string {
  const start = DOC.indexOf(`\n## ${heading}\n`);
  expect(start, `ARCHITECTURE.md has a "## ${heading}" section`).toBeGreaterThan(-1);
  const end = DOC.indexOf('\n## ', start + 1);
  return DOC.slice(start, end === -1 ? undefined : end);
}
const withoutFences = (md: string) => md.replace(/```[\s\S]*?```/g, '');

/** Paragraphs and list items (a table row is a block of its own). */
function blocks(md: string): string[] {
  const out: string[] = [];
  let current: string[] = [];
  const flush = () => {
    if (current.length) out.push(current.join('\n'));
    current = [];
  };
  for (const line of withoutFences(md).split('\n')) {
    if (line.trim() === '' || line.startsWith('#')) flush();
    else if (line.startsWith('|')) {
      flush();
      out.push(line);
    } else {
      if (/^\s*- /.test(line)) flush();
      current.push(line);
    }
  }
  flush();
  return out;
}

/**
 * The paths a block names that do not exist. `strict`: a bare name must sit in the folder of the
 * block's last rooted path. `under`: it may be anywhere under `fallback` (the package a
 * paragraph is about), or with no fallback under the block's last rooted path; with neither,
 * anywhere in the repository.
 */
function missingPaths(block: string, mode: 'strict' | 'under', fallback = ''): string[] {
  const missing: string[] = [];
  let base: string | undefined;
  for (const t of codeSpans(block).filter(isPath)) {
    if (t in NOT_OURS) continue;
    if (rooted(t)) {
      if (!exists(t)) missing.push(t);
      // a paragraph about one package keeps its package when it cites a file elsewhere
      if (mode === 'strict' || fallback === '') base = folderOf(t);
      continue;
    }
    const at = base ?? fallback;
    const found =
      mode === 'strict' && base !== undefined
        ? exists(posix.join(at, t))
        : [...FILES, ...DIRS].some((p) => (at === '' || p.startsWith(`${at}/`)) && `/${p}`.endsWith(`/${t.replace(/\/$/, '')}`));
    if (!found) missing.push(base ? `${t} (next to ${base})` : `${t} (under ${at || 'the repository'})`);
  }
  return missing;
}

function tableRows(md: string): string[][] {
  return withoutFences(md)
    .split('\n')
    .filter((l) => l.startsWith('|') && !/^\|\s*-+/.test(l))
    .slice(1) // the header
    .map((l) =>
      l
        .slice(1, l.lastIndexOf('|'))
        .split(/(?<!\\)\|/)
        .map((c) => c.trim()),
    );
}

describe('ARCHITECTURE.md: every path it names exists', () => {
  it('"Where each rule lives": every row names files, and each exists where the row says', () => {
    const rows = tableRows(section('Where each rule lives'));
    expect(rows.length).toBeGreaterThan(20);
    const problems: string[] = [];
    for (const [rule, files] of rows) {
      if (!files || codeSpans(files).filter(isPath).length === 0) problems.push(`${rule}: names no file`);
      else for (const m of missingPaths(files, 'strict')) problems.push(`${rule}: ${m}`);
    }
    expect(problems).toEqual([]);
  });

  it('"How a request flows": the files each paragraph names exist in the package it is about', () => {
    const LEADS: Record<string, string> = {
      'Authorization server': 'packages/authorization-server/src',
      Middleware: 'packages/resource-server/src',
      Client: 'packages/client/src',
    };
    const problems: string[] = [];
    let checked = 0;
    for (const block of blocks(section('How a request flows'))) {
      const lead = /^\*\*([^*]+?)\.\*\*/.exec(block)?.[1];
      checked += codeSpans(block).filter(isPath).length;
      for (const m of missingPaths(block, 'under', lead ? LEADS[lead] : '')) problems.push(`${lead ?? block.slice(0, 40)}: ${m}`);
    }
    expect(checked).toBeGreaterThan(20);
    expect(problems).toEqual([]);
  });

  it('the packages section: every path it names exists', () => {
    const problems = blocks(section('Packages and the direction of dependencies')).flatMap((b) => missingPaths(b, 'strict'));
    expect(problems).toEqual([]);
  });

  it('the check sees what it is for: a bare name next to the wrong folder is missing', () => {
    expect(missingPaths('`packages/authorization-server/src/interactions/throttle.ts`, `rate-limit.ts`', 'strict')).toEqual([
      'rate-limit.ts (next to packages/authorization-server/src/interactions)',
    ]);
    expect(missingPaths('`packages/authorization-server/src/interactions/throttle.ts`, `csrf.ts`', 'strict')).toEqual([]);
    expect(missingPaths('`packages/no-such-package/src/x.ts`', 'strict')).toEqual(['packages/no-such-package/src/x.ts']);
  });
});

// --- dependencies ---------------------------------------------------------------------------

interface Manifest {
  name: string;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  exports?: Record<string, unknown>;
}
const WORKSPACES = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { workspaces: string[] }).workspaces;
const manifest = (ws: string) => JSON.parse(readFileSync(join(ROOT, ws, 'package.json'), 'utf8')) as Manifest;
const OURS = '@mcp-auth-kit/';
const byName = new Map(WORKSPACES.map((ws) => [manifest(ws).name, ws]));

const SOURCE = /\.(ts|mts|cts|mjs|js|cjs)$/;
const isTestFile = (path: string) => path.split('/').some((s) => s === 'test' || s === 'tests') || /\.test\.[cm]?[jt]s$/.test(path);
function sources(ws: string): string[] {
  return FILES.filter((f) => f.startsWith(`${ws}/`) && SOURCE.test(f) && !f.endsWith('.d.ts'));
}
function importsOf(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  return [...text.matchAll(/(?:\bfrom\s*|^\s*import\s*|\bimport\s*\(\s*|\brequire\s*\(\s*)(['"])([^'"\n]+)\1/gm)].map((m) => m[2]!);
}
const packageOf = (specifier: string) => specifier.split('/').slice(0, 2).join('/');
const runtimeOurs = (m: Manifest) =>
  Object.keys({ ...m.dependencies, ...m.peerDependencies })
    .filter((d) => d.startsWith(OURS))
    .sort();

describe('ARCHITECTURE.md: the dependency table and its "never" rules', () => {
  const table = new Map(
    tableRows(section('Packages and the direction of dependencies')).map(([ws, deps]) => [
      codeSpans(ws ?? '')[0] ?? '',
      codeSpans(deps ?? '')
        .map((d) => `${OURS}${d}`)
        .sort(),
    ]),
  );

  it('has a row for every workspace that depends on a package of ours at run time, and for every package', () => {
    const need = WORKSPACES.filter((ws) => ws.startsWith('packages/') || runtimeOurs(manifest(ws)).length > 0);
    expect([...table.keys()].sort()).toEqual(expect.arrayContaining(need.sort()));
    for (const ws of table.keys()) expect(WORKSPACES, `${ws} is a workspace`).toContain(ws);
  });

  it("each row is what the workspace's package.json declares (dependencies and peerDependencies of ours)", () => {
    expect(table.size).toBeGreaterThanOrEqual(10);
    for (const [ws, deps] of table) expect(runtimeOurs(manifest(ws)), ws).toEqual(deps);
  });

  it('the sources (tests aside) of each workspace import no package of ours beyond its row', () => {
    const problems: string[] = [];
    let seen = 0;
    for (const [ws, deps] of table) {
      const self = manifest(ws).name;
      for (const file of sources(ws).filter((f) => !isTestFile(f))) {
        for (const spec of importsOf(file).filter((s) => s.startsWith(OURS))) {
          seen++;
          const pkg = packageOf(spec);
          if (pkg !== self && !deps.includes(pkg)) problems.push(`${file} imports ${spec}`);
        }
      }
    }
    expect(seen).toBeGreaterThan(50);
    expect(problems).toEqual([]);
  });

  it('test-utils is never a run-time dependency: only devDependencies name it, and only tests import it', () => {
    const problems: string[] = [];
    for (const ws of WORKSPACES) {
      if (runtimeOurs(manifest(ws)).includes(`${OURS}test-utils`)) problems.push(`${ws}/package.json: dependencies`);
      if (ws === 'test-utils' || ws === 'bench') continue; // bench is a tool of the repository, never published
      for (const file of sources(ws).filter((f) => !isTestFile(f))) {
        if (importsOf(file).some((s) => packageOf(s) === `${OURS}test-utils`)) problems.push(file);
      }
    }
    expect(problems).toEqual([]);
  });

  it('no source imports another workspace by path; tests only its helpers, never its src/ (one named exception)', () => {
    // The testing kit's tests run the example server as the user's server they test.
    const ALLOWED = new Set(['packages/testing/test → examples/protected-mcp-server/src/server.ts']);
    const problems: string[] = [];
    let relative = 0;
    for (const ws of WORKSPACES) {
      for (const file of sources(ws)) {
        for (const spec of importsOf(file).filter((s) => s.startsWith('.'))) {
          relative++;
          const target = posix.normalize(posix.join(dirname(file), spec));
          const into = WORKSPACES.find((w) => target === w || target.startsWith(`${w}/`));
          if (into === undefined || into === ws) continue;
          const named = `${posix.dirname(file).split('/').slice(0, 3).join('/')} → ${target.replace(/\.js$/, '.ts')}`;
          if (!isTestFile(file)) problems.push(`${file} imports ${spec} (source of ${into})`);
          else if (target.startsWith(`${into}/src/`) && !ALLOWED.has(named)) problems.push(`${file} imports ${spec} (src of ${into})`);
        }
      }
    }
    expect(relative).toBeGreaterThan(500);
    expect(problems).toEqual([]);
  });

  it('every import of a package of ours names one of its public entries (package.json exports)', () => {
    const problems: string[] = [];
    for (const ws of WORKSPACES) {
      for (const file of sources(ws)) {
        for (const spec of importsOf(file).filter((s) => s.startsWith(OURS))) {
          const target = byName.get(packageOf(spec));
          if (target === undefined) {
            problems.push(`${file}: ${spec} is no workspace`);
            continue;
          }
          const { exports } = manifest(target);
          const subpath = `.${spec.slice(packageOf(spec).length)}`;
          const entries = exports === undefined ? ['.'] : Object.keys(exports).filter((k) => k.startsWith('.'));
          if (!entries.includes(subpath)) problems.push(`${file}: ${spec} (entries of ${target}: ${entries.join(', ')})`);
        }
      }
    }
    expect(problems).toEqual([]);
  });
});
