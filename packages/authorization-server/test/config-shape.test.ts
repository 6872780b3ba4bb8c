/**
 * Issue 43 (configuration of the AS): one defaults tree (src/config/defaults.ts), types that
 * import nothing of ours (src/config/types.ts), and no import circle. Source scans, so a new
 * `?? <literal>` default in a feature module, or an import that closes a circle, fails here.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../src');

function sources(dir = SRC): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

const files = sources().map((path) => ({ path: relative(SRC, path).split('\\').join('/'), text: readFileSync(path, 'utf8') }));

/**
 * `?? <literal>`: a number, boolean, non-empty string, array or object literal, or a
 * `CONSTANT` — a default chosen in place. (`?? []`, `?? {}` and `?? ''` read absent data as
 * empty and choose nothing.)
 */
const LITERAL_DEFAULT =
  /\?\?=?\s*(?:-?\d|true\b|false\b|'[^']+'|"[^"]+"|`[^`]+`|\[\s*[^\]\s]|\{\s*[^}\s]|(?!DEFAULTS\.)[A-Z][A-Z0-9_]{2,}\b)/;

/** Reviewed `?? <literal>` outside src/config/: none is a default of a configuration option. */
const REVIEWED: Array<{ file: string; text: RegExp; why: string }> = [
  {
    file: 'provider/provider.ts',
    text: /current\.jwk\.alg as string \| undefined\) \?\? 'ES256'/,
    why: 'a stored key without `alg` is of the store’s own kind',
  },
  { file: 'tokens/own-access-tokens.ts', text: /k\.alg \?\? 'ES256'/, why: 'the same, for the published keys' },
  {
    file: 'third-party/providers.ts',
    text: /p\.issuer \?\? `urn:mcp-auth-kit:third-party:\$\{p\.name\}`/,
    why: 'a name for explicit endpoints without an issuer (never compared: such an `iss` is refused), not configuration',
  },
  { file: 'provider/provider.ts', text: /initialAccessToken \?\? false/, why: 'oidc-provider spells an unset token `false`' },
  {
    file: 'provider/provider-events.ts',
    text: /\?\? 'unknown'|\?\? 500/,
    why: 'labels of a log line or metric for data oidc-provider left out',
  },
  {
    file: 'http/client-address.ts',
    text: /req\.socket\.remoteAddress \?\? 'unknown'/,
    why: 'throttle, rate-limit and audit key of a request whose socket has no address any more',
  },
  { file: 'clients/cimd.ts', text: /options\.method \?\? 'GET'/, why: 'the Fetch standard’s own default method' },
  { file: 'provider/provider-fetch.ts', text: /options\.method \?\? 'GET'/, why: 'the Fetch standard’s own default method' },
  {
    file: 'tokens/refresh-grace.ts',
    text: /options\.pollMs \?\? 25/,
    why: 'an internal wait step of the grace window, not an option of the server',
  },
  {
    file: 'redis/revocation-publisher.ts',
    text: /options\.prefix \?\? DEFAULT_REVOCATION_PREFIX/,
    why: 'the prefix is shared with the resource server: its one place is @mcp-auth-kit/protocol',
  },
  { file: 'storage/accounts.ts', text: /account\.source \?\? 'operator'/, why: 'a stored account’s origin, not configuration' },
  {
    file: 'storage/assemble.ts',
    text: /cleanupIntervalSeconds \?\? DEFAULT_CLEANUP_INTERVAL_SECONDS/,
    why: 'an option of openStore (storage/, reorganised separately), not of the server',
  },
  { file: 'storage/keys.ts', text: /retireAfter \?\? 0/, why: 'arithmetic on a stored key without a retirement time' },
  { file: 'storage/postgres/index.ts', text: /rowCount \?\? 0/, why: 'arithmetic on a driver result without a row count' },
  { file: 'storage/postgres/connections.ts', text: /rowCount \?\? 0/, why: 'arithmetic on a driver result without a row count' },
  { file: 'storage/postgres/audit.ts', text: /rowCount \?\? 0/, why: 'arithmetic on a driver result without a row count' },
  { file: 'storage/postgres/cimd-trust.ts', text: /rowCount \?\? 0/, why: 'arithmetic on a driver result without a row count' },
  { file: 'storage/audit-log.ts', text: /query\.limit \?\? AUDIT_DEFAULT_LIMIT/, why: 'a page size of a store query, not configuration' },
  { file: 'storage/cimd-trust.ts', text: /existing \?\? \{ clientId/, why: 'a decision on a client not seen yet starts its record' },
  {
    file: 'admin/service.ts',
    text: /longestTokenLifetime \?\? DEFAULT_RETIRE_AFTER_SECONDS/,
    why: 'the admin tool without a configuration: the key retirement it always used (the server passes its token lifetimes)',
  },
  {
    file: 'storage/postgres/index.ts',
    text: /schemaOption \?\? DEFAULT_PG_SCHEMA/,
    why: 'DEFAULT_PG_SCHEMA is DEFAULTS.storage.postgresSchema',
  },
];

describe('configuration of the AS: one defaults tree, one place for the types (issue 43)', () => {
  it('the scan sees the sources', () => {
    expect(files.length).toBeGreaterThan(80);
    expect(files.some((f) => f.path === 'config/defaults.ts')).toBe(true);
  });

  it('no `?? <literal>` default outside src/config/, except the reviewed list', () => {
    const hits = files
      .filter((f) => !f.path.startsWith('config/'))
      .flatMap((f) =>
        f.text
          .split('\n')
          .map((line, i) => ({ file: f.path, line: i + 1, text: line.trim() }))
          .filter((hit) => LITERAL_DEFAULT.test(hit.text)),
      );
    const unreviewed = hits.filter((hit) => !REVIEWED.some((r) => r.file === hit.file && r.text.test(hit.text)));
    expect(
      unreviewed.map((h) => `${h.file}:${h.line} ${h.text}`),
      'put the default in src/config/defaults.ts',
    ).toEqual([]);
    // a reviewed entry that matches nothing any more is removed, so the list stays short and true
    for (const r of REVIEWED)
      expect(
        hits.some((h) => h.file === r.file && r.text.test(h.text)),
        `${r.file} ${r.text}`,
      ).toBe(true);
  });

  it('the scan would see a literal default (guards against a pattern that matches nothing)', () => {
    for (const line of ['config.ttl ?? 300', 'x ?? true', "p.scopes ?? ['profile']", "o.name ?? 'mcp'", 'a ?? DEFAULT_X'])
      expect(LITERAL_DEFAULT.test(line), line).toBe(true);
    for (const line of ['x ?? []', 'x ?? {}', "x ?? ''", 'a ?? b', 'a ?? DEFAULTS.accessTokenTTL'])
      expect(LITERAL_DEFAULT.test(line), line).toBe(false);
  });

  it('src/config/types.ts imports nothing of ours', () => {
    const types = files.find((f) => f.path === 'config/types.ts')!;
    const imports = [...types.text.matchAll(/\bfrom\s+'([^']+)'|import\(\s*'([^']+)'\s*\)/g)].map((m) => m[1] ?? m[2]!);
    expect(imports.length).toBeGreaterThan(0);
    expect(imports.filter((spec) => spec.startsWith('.') || spec.startsWith('@mcp-auth-kit/'))).toEqual([]);
  });

  it('no import circle among the sources (type imports included)', () => {
    const graph = new Map<string, string[]>();
    for (const f of files) {
      const deps = [...f.text.matchAll(/\bfrom\s+'(\.[^']+)'|import\(\s*'(\.[^']+)'\s*\)/g)].map((m) =>
        join(dirname(f.path), (m[1] ?? m[2]!).replace(/\.js$/, '.ts'))
          .split('\\')
          .join('/'),
      );
      graph.set(f.path, deps);
    }
    const cycles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const visit = (node: string, path: string[]) => {
      if (state.get(node) === 'done') return;
      if (state.get(node) === 'open') {
        cycles.push([...path.slice(path.indexOf(node)), node].join(' → '));
        return;
      }
      state.set(node, 'open');
      for (const dep of graph.get(node) ?? []) visit(dep, [...path, node]);
      state.set(node, 'done');
    };
    for (const node of graph.keys()) visit(node, []);
    expect(cycles).toEqual([]);
  });
});
