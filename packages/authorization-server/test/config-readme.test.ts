/**
 * Issue 43: the README's option tables come from the schema and the defaults tree. Every
 * option of src/config/schema.ts has a row (its own or its parent's), and every default of
 * src/config/defaults.ts is the one its row states: a new option or a changed default without
 * its README row fails here.
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { configSchema } from '../src/config/schema.js';
import { DEFAULTS, DEFAULT_SCOPE_DESCRIPTIONS } from '../src/config/defaults.js';

const README = readFileSync(resolve(dirname(fileURLToPath(import.meta.url)), '../README.md'), 'utf8');

/** Rows of the tables whose header is `| field | … default … | meaning |`: option path → default cell. */
function optionRows(markdown: string): Map<string, string> {
  const rows = new Map<string, string>();
  let inTable = false;
  for (const line of markdown.split('\n')) {
    if (/^\| field \| [^|]*default[^|]* \| meaning \|$/.test(line)) {
      inTable = true;
      continue;
    }
    if (!line.startsWith('|')) inTable = false;
    if (!inTable || line.startsWith('| ---')) continue;
    const cells = line.split(/(?<!\\)\|/).map((c) => c.trim());
    const name = /^`([^`]+)`/.exec(cells[1] ?? '')?.[1];
    if (!name) continue;
    // the ID-JAG table names the IdP fields `trustedIdps[].x`; `[]` marks each element of a list,
    // `.<name>` each member of a map (`thirdParty.providers.<name>.x`)
    const path = name
      .replace(/^trustedIdps\[\]/, 'idJag.trustedIdps')
      .replace(/\[\]/g, '')
      .replace(/\.<name>/g, '');
    rows.set(path, cells[2] ?? '');
  }
  return rows;
}

type Schema = z.core.$ZodType;

function unwrap(schema: Schema): Schema {
  const def = schema._zod.def as { type: string; innerType?: Schema };
  return def.type === 'optional' && def.innerType ? unwrap(def.innerType) : schema;
}

/** Every option path of the schema: nested objects are walked, anything else is a leaf. */
function schemaPaths(schema: Schema, prefix = ''): string[] {
  const inner = unwrap(schema);
  const def = inner._zod.def as { type: string; shape?: Record<string, Schema> };
  if (def.type !== 'object' || !def.shape) return [prefix];
  return Object.entries(def.shape).flatMap(([key, child]) => schemaPaths(child, prefix ? `${prefix}.${key}` : key));
}

/** The default as the README writes it: `300`, `true`, `ES256 EdDSA`, `[]`, `{ max: 20, windowSeconds: 3600 }`. */
function shown(value: unknown): string {
  if (Array.isArray(value)) return value.length ? value.join(' ') : '[]';
  if (value && typeof value === 'object')
    return `{ ${Object.entries(value)
      .map(([k, v]) => `${k}: ${shown(v)}`)
      .join(', ')} }`;
  return String(value);
}

function defaultLeaves(value: unknown, prefix = ''): Array<[string, unknown]> {
  if (value && typeof value === 'object' && !Array.isArray(value))
    return Object.entries(value).flatMap(([k, v]) => defaultLeaves(v, prefix ? `${prefix}.${k}` : k));
  return [[prefix, value]];
}

function get(tree: unknown, path: string): unknown {
  return path.split('.').reduce<unknown>((at, key) => (at as Record<string, unknown> | undefined)?.[key], tree);
}

/** Branches of DEFAULTS that are no option of `AuthorizationServerConfig` (documented where their function is). */
const NOT_OPTIONS = ['storage', 'revocationOutbox', 'pinoLogger'];

const rows = optionRows(README);
const ancestors = (path: string) => path.split('.').map((_, i, parts) => parts.slice(0, parts.length - i).join('.'));

describe('README option tables ↔ config schema and defaults (issue 43)', () => {
  it('the tables are found (guards against a parser that reads nothing)', () => {
    expect(rows.size).toBeGreaterThan(40);
    expect(rows.get('accessTokenTTL')).toBe('`300`');
    expect(shown({ max: 20, windowSeconds: 3600 })).toBe('{ max: 20, windowSeconds: 3600 }');
  });

  it('every option of the schema has a row (its own or its parent’s)', () => {
    const paths = schemaPaths(configSchema);
    expect(paths).toEqual(expect.arrayContaining(['issuer', 'registration.rateLimit', 'dpop.nonceSecret', 'loginThrottle.perUser']));
    const missing = paths.filter((path) => !ancestors(path).some((p) => rows.has(p)));
    expect(missing, 'add a row to the option table of the README').toEqual([]);
  });

  it('every default of the tree is the one its row states', () => {
    const wrong: string[] = [];
    for (const [path] of defaultLeaves(DEFAULTS)) {
      if (NOT_OPTIONS.includes(path.split('.')[0]!)) continue;
      // its own row, else the nearest parent's (e.g. `loginThrottle`, whose row shows the whole object)
      const at = ancestors(path).find((p) => rows.has(p));
      if (!at) {
        wrong.push(`${path}: no row`);
        continue;
      }
      const expected = shown(get(DEFAULTS, at));
      if (!rows.get(at)!.includes(`\`${expected}\``)) wrong.push(`${at}: README says ${rows.get(at)}, the default is \`${expected}\``);
    }
    expect(wrong).toEqual([]);
  });

  it('the OpenID Connect scope descriptions of the README are the defaults', () => {
    const row = README.split('\n').find((line) => line.startsWith('| `scopeDescriptions` |'))!;
    for (const [scope, text] of Object.entries(DEFAULT_SCOPE_DESCRIPTIONS)) expect(row).toContain(`\`${scope}\` "${text}"`);
  });
});
