/**
 * PostgreSQL round trips of one refresh (issue 25): every statement costs a socket write and a
 * backend wake-up on both sides, so a token request uses as few as it can. Counted at the
 * driver (`pg.Client.prototype.query`, through which every pooled statement goes) around one
 * refresh of a lone AS, so a change that adds one fails here with the list of statements.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerClient, RESOURCE, tokenRequest } from '../helpers/as.js';
import { authorizeAuto, exchangeCode } from '../helpers/flow.js';
import { startInstance, type Instance } from './as-harness.js';
import { dropSchema, randomSchema, recordStatements, TEST_DATABASE_URL, type RecordedStatement } from './pg-helpers.js';
import { sleep } from './turns.js';

type Statement = RecordedStatement;

/**
 * The statements sent while `run` runs and 100 ms after (the sealed response is kept once the
 * response is on its way); only this file's AS talks to PostgreSQL meanwhile.
 */
async function statementsOf(run: () => Promise<void>): Promise<Statement[]> {
  const { statements } = await recordStatements(async () => {
    await run();
    await sleep(100);
  });
  // The token's audit record kept in the store (issue 44) is written by the audit sink in batches
  // (one INSERT for the events of an event-loop turn), off the response path and in no fixed
  // order with the statements above: at most one such batch per request, then counted apart.
  const batches = statements.filter((s) => kind(s) === 'audit batch');
  expect(batches.length).toBeLessThanOrEqual(1);
  return statements.filter((s) => kind(s) !== 'audit batch');
}

function kind({ text }: Statement): string {
  if (/^SELECT m\.model, m\.id, m\.payload, m\.grant_id/.test(text)) return 'read';
  if (/^INSERT INTO \S+\.kv AS kv /.test(text)) return 'kv increment';
  if (/^INSERT INTO \S+\.kv /.test(text)) return 'kv set';
  if (/^SELECT value FROM \S+\.kv /.test(text)) return 'kv get';
  if (/^WITH s AS \(UPDATE \S+\.oidc_models SET payload.*\) INSERT INTO \S+\.oidc_models /.test(text)) return 'rotate';
  if (/^UPDATE \S+\.oidc_models SET payload/.test(text)) return 'consume';
  if (/^INSERT INTO \S+\.oidc_models /.test(text)) return 'upsert';
  if (/^INSERT INTO \S+\.audit_log /.test(text)) return 'audit batch';
  return text.slice(0, 80);
}

describe('PostgreSQL round trips of a refresh (issue 25)', () => {
  const schema = randomSchema('refresh_round_trips');
  let as: Instance;
  let clientId: string;
  beforeAll(async () => {
    as = await startInstance({ kind: 'postgres', url: TEST_DATABASE_URL, schema });
    clientId = (await registerClient(as.url)).body.client_id;
  });
  afterAll(async () => {
    await as?.close();
    await dropSchema(schema);
  });

  const refresh = (refreshToken: string) =>
    tokenRequest(as.url, { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId, resource: RESOURCE });

  it('OAuth 2.1 §4.3.1 rotation with the RFC 9700 §4.14.2 grace window: one refresh is 4 statements (and a share of an audit batch), the client and its refresh token read in one, the rotation one write', async () => {
    const code = await exchangeCode(as.url, clientId, await authorizeAuto(as.url, clientId));
    expect(code.status, JSON.stringify(code.body)).toBe(200);
    let token = code.body.refresh_token as string;
    // A warm-up refresh first (prepared statements, pool connections), then the counted one.
    for (const counted of [false, true]) {
      let body: Record<string, unknown> = {};
      const statements = await statementsOf(async () => {
        const res = await refresh(token);
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        body = res.body;
      });
      if (counted) {
        expect(statements.map(kind), JSON.stringify(statements.map((s) => s.text.slice(0, 120)))).toEqual([
          'read', // the client and the presented refresh token (with its grant and account), one batch
          'kv increment', // the grace claim, before the provider rotates
          // the rotation: the old refresh token stamped (conditionally) and the new one saved, one
          // atomic statement (the access token is a JWT: nothing stored)
          'rotate',
          'kv set', // the sealed response kept for the window (the response does not wait for it)
        ]);
        expect(statements[0]!.values).toEqual(expect.arrayContaining(['Client', clientId, 'RefreshToken', token]));
      }
      token = body.refresh_token as string;
    }
  });

  it('a retry within the window (the first response was lost) is served in 4 statements (and a share of an audit batch), without a rotation', async () => {
    const code = await exchangeCode(as.url, clientId, await authorizeAuto(as.url, clientId));
    const first = await refresh(code.body.refresh_token as string);
    expect(first.status).toBe(200);
    const statements = await statementsOf(async () => {
      const retry = await refresh(code.body.refresh_token as string);
      expect(retry.status, JSON.stringify(retry.body)).toBe(200);
      expect(retry.body.refresh_token).toBe(first.body.refresh_token);
    });
    expect(statements.map(kind)).toEqual([
      'read', // the client and the presented (consumed) refresh token
      'kv increment', // the claim: taken already, so this is a repeat
      'kv get', // the sealed first response
      'read', // its new refresh token: still unused, so the pair may be repeated
    ]);
  });
});
