import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  makeApp,
  postMcp,
  rpc,
  signToken,
  startIssuerWithKey,
  type StubIssuer,
  type SigningKey,
  type TestApp,
  stopServers,
} from './helpers/harness.js';
import type { ValidationOutcome } from '../src/index.js';

let as: StubIssuer;
let key: SigningKey;
let t: TestApp;
const outcomes: ValidationOutcome[] = [];

beforeAll(async () => {
  ({ as, key } = await startIssuerWithKey());
  const record = () => {};
  t = makeApp({
    authorizationServers: [as.issuer],
    allowedHosts: ['localhost:3000'],
    logger: { info: record, warn: record, debug: record, onValidation: (o) => outcomes.push(o) },
  });
});
afterAll(() => stopServers(t.rs, as));

const post = (body: unknown, token?: string) => postMcp(t.app, body, { host: 'localhost:3000', token });

describe('logger.onValidation (metrics hook)', () => {
  it('reports ok for an accepted token and the reason for each refusal, never the token', async () => {
    outcomes.length = 0;
    const read = await signToken({ key, issuer: as.issuer, claims: { scope: 'notes:read' } });
    const expired = await signToken({ key, issuer: as.issuer, now: Math.floor(Date.now() / 1000) - 3600 });
    await post(rpc('tools/list'), read).expect(200);
    await post(rpc('tools/list')).expect(401);
    await post(rpc('tools/list'), expired).expect(401);
    await post(rpc('tools/call', { name: 'add_note', arguments: {} }), read).expect(403);
    expect(outcomes).toEqual([
      { ok: true, source: 'jwt' },
      { ok: false, reason: 'missing_credentials', status: 401 },
      { ok: false, reason: 'expired', status: 401 },
      { ok: false, reason: 'insufficient_scope', status: 403 },
    ]);
    expect(JSON.stringify(outcomes)).not.toContain(read);
  });

  it('a throwing hook does not break the request', async () => {
    const broken = makeApp({
      authorizationServers: [as.issuer],
      allowedHosts: ['localhost:3000'],
      logger: {
        onValidation: () => {
          throw new Error('metrics down');
        },
      },
    });
    try {
      const read = await signToken({ key, issuer: as.issuer, claims: { scope: 'notes:read' } });
      const res = await postMcp(broken.app, rpc('tools/list'), { host: 'localhost:3000', token: read });
      expect(res.status).toBe(200);
    } finally {
      await broken.rs.close();
    }
  });
});
