/**
 * Every model oidc-provider consumes is single use in the store (of concurrent consumes exactly
 * one stamps; a later one fails with `invalid_grant` and revokes the grant: RFC 6749 §4.1.2,
 * RFC 9700 §4.5.3.1 and §4.14.2, OAuth 2.1 §4.3.1), or is named as an exception with its reason.
 * The list of consumed models is read from the installed oidc-provider, so a model it starts to
 * consume in a later version cannot slip past the adapter's rule.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONSUMED_NOT_SINGLE_USE, SINGLE_USE_MODELS } from '../../src/storage/adapter.js';
import { openStore } from '../../src/storage/index.js';

const require = createRequire(import.meta.url);

/** Class names of oidc-provider's models that define `consume()`. */
function consumedModels(): string[] {
  const modelsDir = join(dirname(require.resolve('oidc-provider/package.json')), 'lib', 'models');
  const names: string[] = [];
  for (const file of readdirSync(modelsDir).filter((f) => f.endsWith('.js'))) {
    const text = readFileSync(join(modelsDir, file), 'utf8');
    const name = /class (\w+) extends/.exec(text)?.[1];
    if (name && /async consume\(\)/.test(text)) names.push(name);
  }
  return names.sort();
}

describe('single-use models (the adapter rule, src/storage/adapter.ts)', () => {
  it('every model oidc-provider consumes is single use or a named exception', () => {
    const consumed = consumedModels();
    // the scan itself works: the models known today are found
    expect(consumed).toEqual(expect.arrayContaining(['AuthorizationCode', 'RefreshToken', 'DeviceCode']));
    for (const model of consumed) {
      expect(SINGLE_USE_MODELS.has(model) || model in CONSUMED_NOT_SINGLE_USE, `${model}: single use, or say why not`).toBe(true);
    }
    for (const model of Object.keys(CONSUMED_NOT_SINGLE_USE)) expect(SINGLE_USE_MODELS.has(model)).toBe(false);
  });

  it.each([...SINGLE_USE_MODELS])(
    '%s: of concurrent consumes exactly one succeeds; the others fail and revoke the grant',
    async (model) => {
      const store = await openStore({ kind: 'memory' }, { cleanupIntervalSeconds: 0 });
      try {
        const rows = store.adapter(model);
        const grants = store.adapter('Grant');
        await grants.upsert('g', { jti: 'g', kind: 'Grant' }, 600);
        await rows.upsert('x', { jti: 'x', kind: model, grantId: 'g' }, 600);
        const results = await Promise.allSettled(Array.from({ length: 4 }, () => rows.consume('x')));
        expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
        for (const r of results.filter((x) => x.status === 'rejected')) {
          expect((r as PromiseRejectedResult).reason).toMatchObject({ error: 'invalid_grant' });
        }
        expect(await grants.find('g')).toBeUndefined();
        expect(await rows.find('x')).toBeUndefined();
      } finally {
        await store.close();
      }
    },
  );
});
