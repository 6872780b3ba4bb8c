import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CookieJar } from 'tough-cookie';
import type { StorageConfig } from '@mcp-auth-kit/authorization-server';
import { authorizationUrl, frontChannel, pkcePair, registerClient, startAttackStack, type AttackStack } from './helpers/support.js';
import { openPgScope, type PgScope } from '../faults/helpers/postgres.js';

/**
 * Review 40, finding 7: a NUL (U+0000) in a request value reached PostgreSQL, whose `text`
 * cannot hold it, and the driver error became a 500 on the login form, /token, /auth and
 * /token/revocation, where the memory store answered 400/401/200. RFC 6749 §5.2 and RFC 7009
 * §2.2 answer an unknown client, grant or token with an OAuth error (or 200 for revocation),
 * never a server error. The store layer (`storage/no-nul.ts`) keeps such values from every
 * backend: a lookup finds nothing. Every entry point, on every store, answers the same.
 */
const form = (o: Record<string, string>) => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(o).toString(),
});

type Probe = (s: AttackStack, clientId: string) => Promise<number>;

async function loginAs(s: AttackStack, clientId: string, username: string, password = 'x'): Promise<number> {
  const jar = new CookieJar();
  const page = await frontChannel(s.issuer, authorizationUrl(s, { clientId, challenge: pkcePair().challenge }), jar);
  if (page.kind !== 'stopped') throw new Error('expected the login page');
  const action = new URL(/<form method="post" action="([^"]+)"/.exec(page.body)![1]!.replace(/&amp;/g, '&'), s.issuer);
  const csrf = /name="csrf" value="([^"]+)"/.exec(page.body)![1]!;
  const res = await fetch(action, {
    ...form({ csrf, action: 'login', username, password }),
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: await jar.getCookieString(action.href) },
    redirect: 'manual',
  });
  return res.status;
}

const verifier = 'x'.repeat(43);
/** Entry point → the answer every store gives (the memory store's, before and after). */
const ENTRY_POINTS: Array<[string, number, Probe]> = [
  ['login form username', 401, (s, c) => loginAs(s, c, 'victim\u0000')],
  [
    '/token client_id',
    401,
    async (s) =>
      (
        await fetch(
          `${s.issuer}/token`,
          form({
            grant_type: 'authorization_code',
            code: 'x',
            client_id: 'a\u0000b',
            code_verifier: verifier,
            redirect_uri: 'http://127.0.0.1/callback',
          }),
        )
      ).status,
  ],
  [
    '/token code',
    400,
    async (s, c) =>
      (
        await fetch(
          `${s.issuer}/token`,
          form({
            grant_type: 'authorization_code',
            code: 'a\u0000b',
            client_id: c,
            code_verifier: verifier,
            redirect_uri: 'http://127.0.0.1/callback',
          }),
        )
      ).status,
  ],
  [
    '/token refresh_token',
    400,
    async (s, c) =>
      (await fetch(`${s.issuer}/token`, form({ grant_type: 'refresh_token', refresh_token: 'a\u0000b', client_id: c }))).status,
  ],
  [
    '/auth client_id',
    400,
    async (s) => (await fetch(`${s.issuer}/auth?client_id=a%00b&response_type=code`, { redirect: 'manual' })).status,
  ],
  [
    '/token/revocation token',
    200,
    async (s, c) => (await fetch(`${s.issuer}/token/revocation`, form({ token: 'a\u0000b', client_id: c }))).status,
  ],
  ['/reg/:id', 401, async (s) => (await fetch(`${s.issuer}/reg/a%00b`, { headers: { authorization: 'Bearer a' } })).status],
  ['/interaction/:uid', 400, async (s) => (await fetch(`${s.issuer}/interaction/a%00b`)).status],
];

const STORES = ['memory', 'sqlite', 'postgres'] as const;

describe.each(STORES)('attack: U+0000 in request values on the %s store', (kind) => {
  let stack: AttackStack;
  let pg: PgScope | undefined;
  let dir: string | undefined;
  let clientId: string;

  beforeAll(async () => {
    let storage: StorageConfig;
    if (kind === 'postgres') {
      pg = await openPgScope('nul_values');
      storage = { kind: 'postgres', url: pg.url, schema: pg.schema } as const;
    } else if (kind === 'sqlite') {
      dir = mkdtempSync(join(tmpdir(), 'nul-values-'));
      storage = { kind: 'sqlite', file: join(dir, 'as.sqlite') } as const;
    } else storage = { kind: 'memory' } as const;
    stack = await startAttackStack({
      devAutoLogin: undefined,
      storage,
      authorizationServer: { users: [{ username: 'victim', password: 'victim-password-1' }] },
    });
    clientId = await registerClient(stack);
  });
  afterAll(async () => {
    await stack?.close();
    await pg?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it.each(ENTRY_POINTS)('%s: answers %i, never a 5xx', async (_, expected, probe) => {
    expect(await probe(stack, clientId)).toBe(expected);
  });

  it('the store still works afterwards (the pool was not poisoned): the right password signs in', async () => {
    expect(await loginAs(stack, clientId, 'victim', 'victim-password-1')).toBe(303);
  });
});
