/**
 * Clients, grants, refresh tokens and keys survive an AS restart (SQLite file, PostgreSQL
 * schema): the restarted AS has nothing in memory but what it reads back from its store.
 */
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { expectOAuthError } from '@mcp-auth-kit/test-utils';
import type { StorageConfig } from '../../src/storage/index.js';
import { registerClient } from '../helpers/as.js';
import { authorizeAuto, exchangeCode, refreshWith } from '../helpers/flow.js';
import { getJwks, startInstance, verifyAccessToken } from './as-harness.js';
import { dropSchema, randomSchema, TEST_DATABASE_URL } from './pg-helpers.js';
import { scratchDir } from './scratch-dir.js';
import { caseName, SQLITE_DRIVERS } from './sqlite-drivers.js';

const dir = scratchDir('restart');
const schema = randomSchema('storage_restart');
afterAll(() => dropSchema(schema));

const targets: [string, StorageConfig, string | undefined][] = [
  ...SQLITE_DRIVERS.map((c): [string, StorageConfig, string | undefined] => [
    caseName(c),
    { kind: 'sqlite', file: join(dir, `as-${c.driver}.sqlite`), driver: c.driver },
    c.skip,
  ]),
  ['postgres', { kind: 'postgres', url: TEST_DATABASE_URL, schema }, undefined],
];

describe.each(targets)('AS restart on %s', (_name, storage, skip) => {
  it.skipIf(skip !== undefined)('keeps keys (identical JWKS), registered clients, grants and refresh tokens', async () => {
    const instance = await startInstance(storage);
    try {
      const issuer = instance.as().issuer;
      const reg = await registerClient(instance.url);
      expect(reg.status).toBe(201);
      const clientId = reg.body.client_id as string;
      const flow = await authorizeAuto(instance.url, clientId);
      const first = await exchangeCode(instance.url, clientId, flow);
      expect(first.status).toBe(200);
      const jwksBefore = await getJwks(instance.url);

      await instance.restart();

      const jwksAfter = await getJwks(instance.url);
      expect(jwksAfter).toEqual(jwksBefore);
      // A token signed before the restart still verifies against the JWKS after it.
      expect((await verifyAccessToken(first.body.access_token, jwksAfter, issuer)).client_id).toBe(clientId);

      // The grant and the rotating refresh token were read back from the store.
      const refreshed = await refreshWith(instance.url, clientId, first.body.refresh_token);
      expect(refreshed.status, JSON.stringify(refreshed.body)).toBe(200);
      expect(refreshed.body.refresh_token).not.toBe(first.body.refresh_token);
      const claims = await verifyAccessToken(refreshed.body.access_token, jwksAfter, issuer);
      expect(claims.sub).toBe(decodeSub(first.body.access_token));

      // The dynamically registered client is still known: a new authorization works.
      const again = await authorizeAuto(instance.url, clientId);
      expect((await exchangeCode(instance.url, clientId, again)).status).toBe(200);

      // The old (rotated) refresh token stays spent across the restart.
      await instance.restart();
      const reuse = await refreshWith(instance.url, clientId, first.body.refresh_token, { resource: undefined });
      expectOAuthError(reuse, 'invalid_grant', 400);
    } finally {
      await instance.close();
    }
  });
});

function decodeSub(jwt: string): string {
  return JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString()).sub as string;
}
