#!/usr/bin/env node
// `npm run lint:packages` (part of `npm test`): packs every published package exactly as
// `npm publish` would (prepack builds it) and checks the tarballs, not the working tree:
//   - manifest: MIT license, repository, engines, ESM, public access, ranges (not pins) for
//     runtime dependencies, every exports/main/types/bin target shipped;
//   - contents: README, LICENSE (the root one), CHANGELOG; no build info, no tests, no dist
//     file without its source (a stale output of a deleted module); source maps whose sources
//     are shipped;
//   - publint (strict) and @arethetypeswrong/cli (profile esm-only: the packages are ESM only,
//     so CommonJS `require` resolving to ESM is expected, everything else is checked).
// Exit code 1 and one line per problem when anything is wrong.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, posix, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { publint } from 'publint';
import { formatMessage } from 'publint/utils';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const readJson = (file) => JSON.parse(readFileSync(file, 'utf8'));
const rootManifest = readJson(join(root, 'package.json'));
const rootLicense = readFileSync(join(root, 'LICENSE'), 'utf8');
const npm = process.env.npm_execpath?.endsWith('.js') ? [process.execPath, process.env.npm_execpath] : ['npm'];
const attw = join(root, 'node_modules/@arethetypeswrong/cli/dist/index.js');

const workspaces = rootManifest.workspaces.filter((ws) => !readJson(join(root, ws, 'package.json')).private);
const problems = [];
const problem = (pkg, text) => problems.push(`${pkg}: ${text}`);

const dest = mkdtempSync(join(tmpdir(), 'mcp-auth-kit-lint-'));
try {
  const out = execFileSync(
    npm[0],
    [...npm.slice(1), 'pack', '--json', '--pack-destination', dest, ...workspaces.flatMap((ws) => ['-w', ws])],
    {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  const packed = JSON.parse(out.slice(out.indexOf('[')));
  for (const [index, entry] of packed.entries()) {
    const dir = join(root, workspaces[index]);
    const manifest = readJson(join(dir, 'package.json'));
    if (manifest.name !== entry.name) throw new Error(`npm pack order: expected ${manifest.name}, got ${entry.name}`);
    checkManifest(manifest);
    checkContents(manifest, new Set(entry.files.map((f) => f.path)), dir);
    const tarball = join(dest, entry.filename);
    await runPublint(manifest.name, tarball);
    runAttw(manifest, tarball);
    console.log(`${manifest.name}@${manifest.version}: ${entry.files.length} files, ${(entry.size / 1024).toFixed(1)} kB packed`);
  }
} finally {
  rmSync(dest, { recursive: true, force: true });
}

if (problems.length > 0) {
  console.error(`\n${problems.length} packaging problem(s):\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  process.exit(1);
}
console.log(`packages OK: ${workspaces.length} tarballs pass the manifest and content checks, publint and attw`);

function checkManifest(m) {
  const name = m.name;
  if (m.license !== 'MIT') problem(name, `license is ${m.license}, expected MIT`);
  if (m.type !== 'module') problem(name, 'type must be "module" (the packages are ESM)');
  if (!m.repository?.url || !m.repository?.directory) problem(name, 'repository { url, directory } missing');
  if (!m.engines?.node) problem(name, 'engines.node missing');
  if (m.engines?.node !== rootManifest.engines.node)
    problem(name, `engines.node ${m.engines?.node} differs from the root's ${rootManifest.engines.node}`);
  if (m.publishConfig?.access !== 'public') problem(name, 'publishConfig.access must be "public" (scoped package)');
  if (!Array.isArray(m.files)) problem(name, 'files whitelist missing');
  for (const [dep, range] of Object.entries({ ...m.dependencies, ...m.peerDependencies })) {
    // A pin blocks dedupe and security patches in users' trees; the lockfile pins our own tests.
    if (/^\d/.test(range)) problem(name, `${dep}@${range} is pinned: use a range (^ or ~)`);
  }
  for (const dep of Object.keys(m.peerDependenciesMeta ?? {})) {
    if (!m.peerDependencies?.[dep]) problem(name, `peerDependenciesMeta.${dep} without a peer dependency`);
  }
  if (m.dependencies?.express) problem(name, "express must be a peer dependency (one copy in the user's tree)");
}

function exportTargets(exports) {
  if (typeof exports === 'string') return [exports];
  if (exports && typeof exports === 'object') return Object.values(exports).flatMap(exportTargets);
  return [];
}

function checkContents(m, files, dir) {
  const name = m.name;
  for (const required of ['package.json', 'README.md', 'LICENSE', 'CHANGELOG.md'])
    if (!files.has(required)) problem(name, `${required} is not in the tarball`);
  if (readFileSync(join(dir, 'LICENSE'), 'utf8') !== rootLicense) problem(name, 'LICENSE differs from the root LICENSE');
  const targets = [...exportTargets(m.exports), m.main, m.types, ...Object.values(m.bin ?? {})].filter(Boolean);
  for (const target of targets) {
    if (!files.has(posix.normalize(target))) problem(name, `${target} (exports/main/types/bin) is not in the tarball`);
  }
  for (const file of files) {
    if (/\.tsbuildinfo$/.test(file)) problem(name, `${file}: build info shipped`);
    if (/(^|\/)(test|tests|__tests__)\/|\.test\.[cm]?[jt]s$/.test(file)) problem(name, `${file}: test file shipped`);
    if (!/^(dist|src|bin)\/|^(package\.json|README\.md|LICENSE|CHANGELOG\.md)$/.test(file)) problem(name, `${file}: unexpected file`);
    const compiled = /^dist\/(.+)\.(js|d\.ts)$/.exec(file);
    if (compiled && !files.has(`src/${compiled[1]}.ts`)) {
      problem(name, `${file} has no source src/${compiled[1]}.ts (stale build output: npm run clean && npm run build)`);
    }
    if (file.endsWith('.map')) {
      const map = readJson(join(dir, file));
      for (const source of map.sources ?? []) {
        const shipped = posix.normalize(posix.join(posix.dirname(file), map.sourceRoot ?? '', source));
        if (!files.has(shipped)) problem(name, `${file} points at ${source}, which is not shipped`);
      }
    }
  }
}

async function runPublint(name, tarball) {
  const bytes = readFileSync(tarball);
  const { messages, pkg } = await publint({
    strict: true,
    pack: { tarball: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) },
  });
  for (const message of messages) problem(name, `publint ${message.type}: ${formatMessage(message, pkg) ?? message.code}`);
}

function runAttw(m, tarball) {
  // A bin-only package (no exports but package.json) has no entrypoint with types to analyse.
  const entrypoints = Object.keys(typeof m.exports === 'object' ? m.exports : {}).filter((e) => e !== './package.json');
  if (entrypoints.length === 0) return;
  try {
    execFileSync(process.execPath, [attw, tarball, '--profile', 'esm-only', '--format', 'ascii', '--no-color', '--no-emoji'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (error) {
    problem(m.name, `attw:\n${String(error.stdout ?? '').trim()}\n${String(error.stderr ?? '').trim()}`);
  }
}
