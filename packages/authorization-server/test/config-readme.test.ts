/**
 * Issue 43: the README's option tables come from the schema and the defaults tree. Every
 * option of src/config/schema.ts has a row (its own or its parent's), and every default of
 * src/config/defaults.ts is the one its row states: a new option or a changed default without
 * its README row fails here.
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { missingRows, optionRows, schemaPaths, shown, wrongDefaults } from '@mcp-auth-kit/test-utils';
import { describe, expect, it } from 'vitest';
import { configSchema } from '../src/config/schema.js';
import { DEFAULTS, DEFAULT_SCOPE_DESCRIPTIONS } from '../src/config/defaults.js';

const README = readFileSync(resolve(dirname(fileURLToPath(import.meta.url)), '../README.md'), 'utf8');

/** Branches of DEFAULTS that are no option of `AuthorizationServerConfig` (documented where their function is). */
const NOT_OPTIONS = ['storage', 'revocationOutbox', 'pinoLogger'];

// the ID-JAG table names the IdP fields `trustedIdps[].x`
const rows = optionRows(README, { rename: (name) => name.replace(/^trustedIdps\[\]/, 'idJag.trustedIdps') });

describe('README option tables ↔ config schema and defaults (issue 43)', () => {
  it('the tables are found (guards against a parser that reads nothing)', () => {
    expect(rows.size).toBeGreaterThan(40);
    expect(rows.get('accessTokenTTL')).toBe('`300`');
    expect(shown({ max: 20, windowSeconds: 3600 })).toBe('{ max: 20, windowSeconds: 3600 }');
  });

  it('every option of the schema has a row (its own or its parent’s)', () => {
    expect(schemaPaths(configSchema)).toEqual(
      expect.arrayContaining(['issuer', 'registration.rateLimit', 'dpop.nonceSecret', 'loginThrottle.perUser']),
    );
    expect(missingRows(configSchema, rows), 'add a row to the option table of the README').toEqual([]);
  });

  it('every default of the tree is the one its row states', () => {
    // its own row, else the nearest parent's (e.g. `loginThrottle`, whose row shows the whole object)
    expect(wrongDefaults(DEFAULTS, rows, { notOptions: NOT_OPTIONS })).toEqual([]);
  });

  it('the OpenID Connect scope descriptions of the README are the defaults', () => {
    const row = README.split('\n').find((line) => line.startsWith('| `scopeDescriptions` |'))!;
    for (const [scope, text] of Object.entries(DEFAULT_SCOPE_DESCRIPTIONS)) expect(row).toContain(`\`${scope}\` "${text}"`);
  });
});
