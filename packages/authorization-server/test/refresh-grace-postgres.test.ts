/**
 * Refresh grace across two AS instances behind one (imaginary) load balancer: separate HTTP
 * servers, providers and pools, one PostgreSQL schema (dropped afterwards), one issuer.
 */
import { createHash } from 'node:crypto';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { expectOAuthError } from '@mcp-auth-kit/test-utils';
import { registerClient } from './helpers/as.js';
import { authorizeAuto, exchangeCode, refreshWith } from './helpers/flow.js';
import { pairWithClientForDescribe, type Instance } from './storage/as-harness.js';
import { randomSchema, TEST_DATABASE_URL } from './storage/pg-helpers.js';

describe('refresh grace with two AS instances sharing one PostgreSQL schema', () => {
  const schema = randomSchema('refresh_grace');
  let a: Instance;
  let b: Instance;
  let clientId: string;

  pairWithClientForDescribe(schema, (pair) => ({ a, b, clientId } = pair));

  async function initialTokens() {
    const res = await exchangeCode(a.url, clientId, await authorizeAuto(a.url, clientId));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body;
  }
  const refresh = (base: string, refreshToken: string) => refreshWith(base, clientId, refreshToken);

  it('RFC 9700 §4.14.2 grace policy: concurrent refreshes of one token on instance A and B get the identical pair; the grant survives', async () => {
    for (let round = 0; round < 3; round++) {
      const tokens = await initialTokens();
      const [ra, rb] = await Promise.all([refresh(a.url, tokens.refresh_token), refresh(b.url, tokens.refresh_token)]);
      expect(ra.status, JSON.stringify(ra.body)).toBe(200);
      expect(rb.status, JSON.stringify(rb.body)).toBe(200);
      expect(rb.body.access_token).toBe(ra.body.access_token);
      expect(rb.body.refresh_token).toBe(ra.body.refresh_token);
      expect(rb.headers.get('cache-control')).toBe('no-store');
      const next = await refresh(round % 2 ? a.url : b.url, ra.body.refresh_token);
      expect(next.status, JSON.stringify(next.body)).toBe(200);
    }
  });

  it('a retry of a lost response on the other instance gets the same pair', async () => {
    const tokens = await initialTokens();
    const first = await refresh(a.url, tokens.refresh_token);
    expect(first.status).toBe(200);
    const retry = await refresh(b.url, tokens.refresh_token);
    expect(retry.status, JSON.stringify(retry.body)).toBe(200);
    expect(retry.body.refresh_token).toBe(first.body.refresh_token);
    expect(retry.body.access_token).toBe(first.body.access_token);
  });

  it('RFC 9700 §4.14.2: another client presenting the rotated token on the other instance → invalid_grant, grant revoked everywhere', async () => {
    const tokens = await initialTokens();
    const first = await refresh(a.url, tokens.refresh_token);
    const other = (await registerClient(b.url)).body.client_id as string;
    const stolen = await refreshWith(b.url, other, tokens.refresh_token);
    expectOAuthError(stolen, 'invalid_grant', 400);
    expect(stolen.body.access_token).toBeUndefined();
    expect((await refresh(a.url, first.body.refresh_token)).body.error).toBe('invalid_grant');
  });

  it('the kv rows in PostgreSQL hold neither the refresh token nor the issued tokens (key = SHA-256, value sealed)', async () => {
    const tokens = await initialTokens();
    const first = await refresh(b.url, tokens.refresh_token);
    expect(first.status).toBe(200);
    const slot = createHash('sha256').update(tokens.refresh_token).digest('base64url');
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    try {
      // The sealed response is written after the answer (the response does not wait for the
      // store), so read until it is there.
      const readRows = async () =>
        (
          await client.query<{ key: string; value: string }>(
            `SELECT key, value::text AS value FROM "${schema}".kv WHERE namespace = 'refresh-grace'`,
          )
        ).rows;
      let rows = await readRows();
      for (let i = 0; i < 100 && !rows.some((r) => r.key === `r:${slot}`); i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        rows = await readRows();
      }
      const mine = rows.filter((r) => r.key.endsWith(slot));
      expect(mine.map((r) => r.key).sort()).toEqual([`c:${slot}`, `r:${slot}`]);
      const dump = JSON.stringify(rows);
      for (const secret of [tokens.refresh_token, first.body.refresh_token, first.body.access_token])
        expect(dump.includes(secret)).toBe(false);
      expect(JSON.parse(mine.find((r) => r.key.startsWith('r:'))!.value)).toMatchObject({ v: 1, ct: expect.any(String) });
    } finally {
      await client.end();
    }
  });
});
