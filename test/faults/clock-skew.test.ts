import { beforeAll, describe, expect, it } from 'vitest';
import { decodeJwt } from 'jose';
import { fullFlow, registerClient, useAttackStack } from '../security/helpers/support.js';
import { sharedForSuite } from '../helpers/suite.js';
import { listenProtectedEndpoint, post } from './helpers/resource-server.js';

/**
 * Clock skew at the resource server (RFC 9068 §4 / RFC 7519 §4.1.4: `exp` with a small leeway).
 * Real tokens from the running AS; the resource server's clock is moved with its `now` option.
 */
describe('fault: resource server clock skew', () => {
  const endpoint = sharedForSuite(listenProtectedEndpoint);
  const stack = useAttackStack(() => ({ extraResources: [endpoint.resource] }));
  let token: string;
  let exp: number;
  let iat: number;

  beforeAll(async () => {
    const tokens = await fullFlow(stack, await registerClient(stack), { resource: endpoint.resource });
    token = tokens.access_token;
    ({ exp, iat } = decodeJwt(token) as { exp: number; iat: number });
  });

  const at = (seconds: number, clockTolerance?: number) => {
    endpoint.protect(stack.issuer, { now: () => seconds * 1000, cache: false, ...(clockTolerance !== undefined && { clockTolerance }) });
    return post(endpoint.resource, token);
  };

  it('baseline: correct clock → accepted', async () => {
    expect((await at(Math.floor(Date.now() / 1000))).status).toBe(200);
  });

  it('RS clock ahead, token expired 20 s ago, within the default 30 s tolerance → accepted', async () => {
    expect((await at(exp + 20)).status).toBe(200);
  });

  it('RS clock ahead, token expired 40 s ago, beyond the default 30 s tolerance → 401 invalid_token', async () => {
    const res = await at(exp + 40);
    expect(res.status).toBe(401);
    expect(res.challenge).toContain('error="invalid_token"');
  });

  it('tolerance 0: one second past exp → 401; tolerance 120: 100 s past exp → accepted', async () => {
    expect((await at(exp + 1, 0)).status).toBe(401);
    expect((await at(exp + 100, 120)).status).toBe(200);
  });

  it('RS clock behind the AS by 10 minutes (token "from the future", exp still ahead) → accepted', async () => {
    expect((await at(iat - 600)).status).toBe(200);
  });

  it('the validated-token cache does not outlive exp: accepted once, then refused after the clock moves past exp + tolerance', async () => {
    let now = Math.floor(Date.now() / 1000) * 1000;
    endpoint.protect(stack.issuer, { now: () => now });
    expect((await post(endpoint.resource, token)).status).toBe(200);
    now = (exp + 31) * 1000;
    expect((await post(endpoint.resource, token)).status).toBe(401);
  });

  it('an unreasonable tolerance is refused at start-up (at most 300 s)', () => {
    expect(() => endpoint.protect(stack.issuer, { clockTolerance: 3600 })).toThrow();
  });
});
