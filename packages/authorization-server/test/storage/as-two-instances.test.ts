/**
 * Two AS instances behind one (imaginary) load balancer: separate HTTP servers on different
 * loopback ports, separate providers and connection pools, one PostgreSQL schema, one issuer.
 * Every step of a client's life may land on either instance.
 */
import { describe, expect, it } from 'vitest';
import { expectOAuthError } from '@mcp-auth-kit/test-utils';
import { registerClient } from '../helpers/as.js';
import { authorizeAuto, exchangeCode, refreshWith } from '../helpers/flow.js';
import { getJwks, pairForDescribe, startInstance, verifyAccessToken, type Instance } from './as-harness.js';
import { dropSchema, randomSchema, TEST_DATABASE_URL } from './pg-helpers.js';

describe('two AS instances sharing one PostgreSQL schema', () => {
  const schema = randomSchema('storage_two');
  let a: Instance;
  let b: Instance;
  let issuer: string;

  // B starts while A is serving (a rolling deploy); the same-moment start is tested below.
  pairForDescribe(schema, (pair) => {
    ({ a, b, issuer } = pair);
  });

  it('publish identical JWKS', async () => {
    const [ja, jb] = await Promise.all([getJwks(a.url), getJwks(b.url)]);
    expect(ja.keys.length).toBeGreaterThanOrEqual(2);
    expect(jb).toEqual(ja);
  });

  it('register on A, authorize on A, redeem the code on B, refresh on A, revoke on B', async () => {
    const reg = await registerClient(a.url);
    expect(reg.status).toBe(201);
    const clientId = reg.body.client_id as string;
    const jwks = await getJwks(b.url);

    const flow = await authorizeAuto(a.url, clientId);
    expect(flow.callback.searchParams.get('iss')).toBe(issuer);
    const token = await exchangeCode(b.url, clientId, flow);
    expect(token.status, JSON.stringify(token.body)).toBe(200);
    expect((await verifyAccessToken(token.body.access_token, jwks, issuer)).client_id).toBe(clientId);

    const refreshed = await refreshWith(a.url, clientId, token.body.refresh_token);
    expect(refreshed.status, JSON.stringify(refreshed.body)).toBe(200);
    await verifyAccessToken(refreshed.body.access_token, jwks, issuer);

    const revoke = await fetch(`${b.url}/token/revocation`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: refreshed.body.refresh_token, token_type_hint: 'refresh_token', client_id: clientId }),
    });
    expect(revoke.status).toBe(200);

    const afterRevoke = await refreshWith(a.url, clientId, refreshed.body.refresh_token);
    expectOAuthError(afterRevoke, 'invalid_grant', 400);
  });

  it('OAuth 2.1 §4.1.3: a code redeemed on A is refused on B, and the replay revokes the tokens A issued', async () => {
    const reg = await registerClient(b.url);
    const clientId = reg.body.client_id as string;
    const flow = await authorizeAuto(b.url, clientId);
    const first = await exchangeCode(a.url, clientId, flow);
    expect(first.status).toBe(200);
    const second = await exchangeCode(b.url, clientId, flow);
    expectOAuthError(second, 'invalid_grant', 400);
    const refresh = await refreshWith(a.url, clientId, first.body.refresh_token);
    expect(refresh.status, 'the grant was revoked in the shared store').toBe(400);
    expect(refresh.body.error).toBe('invalid_grant');
  });

  // Seeding users and the dev auto-login account races between instances on an empty schema:
  // a `conflict` from accounts.create is read as "already exists".
  it('instances starting at the same moment on an empty schema both come up with the same keys', async () => {
    const fresh = randomSchema('storage_two_race');
    const storage = { kind: 'postgres', url: TEST_DATABASE_URL, schema: fresh } as const;
    const started = await Promise.allSettled([startInstance(storage, issuer), startInstance(storage, issuer)]);
    try {
      expect(started.map((s) => s.status)).toEqual(['fulfilled', 'fulfilled']);
      const [x, y] = started.map((s) => (s as PromiseFulfilledResult<Instance>).value);
      expect(await getJwks(y!.url)).toEqual(await getJwks(x!.url));
    } finally {
      await Promise.all(started.map((s) => (s.status === 'fulfilled' ? s.value.close() : undefined)));
      await dropSchema(fresh);
    }
  });
});
