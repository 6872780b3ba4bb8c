/**
 * Issue 43: the README's option table comes from the schema and the defaults tree. Every option
 * of src/config/schema.ts has a row (its own or its parent's), and every default of
 * src/config/defaults.ts is the one its row states: a new option or a changed default without
 * its README row fails here.
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { missingRows, optionRows, schemaPaths, wrongDefaults } from '@mcp-auth-kit/test-utils';
import { describe, expect, it } from 'vitest';
import { DEFAULTS } from '../src/config/defaults.js';
import { optionsSchema } from '../src/config/schema.js';

const README = readFileSync(resolve(dirname(fileURLToPath(import.meta.url)), '../README.md'), 'utf8');

/** Branches of DEFAULTS that are no option of `McpAuthClient`: the defaults of the helpers with options of their own. */
const NOT_OPTIONS = ['fileStore', 'privateKeyAlg', 'urlElicitation', 'enterpriseSignIn', 'doctor', 'cimd'];

const rows = optionRows(README);

describe('README option table of `McpAuthClient` ↔ config schema and defaults (issue 43)', () => {
  it('the table is found (guards against a parser that reads nothing)', () => {
    expect(rows.size).toBeGreaterThan(25);
    expect(rows.get('authorizationTimeoutMs')).toBe('`number`, `300000`');
  });

  it('every option of the schema has a row (its own or its parent’s)', () => {
    expect(schemaPaths(optionsSchema)).toEqual(expect.arrayContaining(['clientName', 'loopback.port', 'clientCredentials', 'dpop']));
    expect(missingRows(optionsSchema, rows), 'add a row to the option table of the README').toEqual([]);
  });

  it('every default of the tree is the one its row states', () => {
    expect(wrongDefaults(DEFAULTS, rows, { notOptions: NOT_OPTIONS, quoteStrings: true })).toEqual([]);
  });
});
