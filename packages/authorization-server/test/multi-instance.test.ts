/**
 * Several AS instances behind one load balancer, sharing one PostgreSQL store: every request
 * of a flow may land on either instance (sessions, interactions, codes, refresh tokens, keys,
 * cookies, CIMD cache and rate limits all live in the store).
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuthorizationServer, silentLogger, type AuthorizationServer } from '../src/index.js';
import { openStore } from '../src/storage/index.js';
import type { Store } from '../src/storage/types.js';
import { decodeJwt, REDIRECT, registerClient, RESOURCE } from './helpers/as.js';
import { openAuthorization, refreshWith, exchangeCode } from './helpers/flow.js';
import { HeadlessBrowser, isUrl } from '@mcp-auth-kit/test-utils';

const PG_URL = process.env.TEST_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test';

describe('two instances behind a round-robin balancer on one PostgreSQL store', () => {
  const schema = `as_multi_${randomBytes(4).toString('hex')}`;
  const stores: Store[] = [];
  const instances: AuthorizationServer[] = [];
  const served: number[] = [0, 0];
  let balancer: Server;
  let url: string;

  beforeAll(async () => {
    let turn = 0;
    balancer = createServer((req: IncomingMessage, res: ServerResponse) => {
      const i = turn++ % 2;
      served[i]!++;
      (instances[i]!.app as unknown as (q: IncomingMessage, s: ServerResponse) => void)(req, res);
    });
    await new Promise<void>((r) => balancer.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(balancer.address() as AddressInfo).port}`;
    for (let i = 0; i < 2; i++) {
      const store = await openStore({ kind: 'postgres', url: PG_URL, schema });
      stores.push(store);
      instances.push(
        await createAuthorizationServer({
          issuer: url,
          resources: [{ resource: RESOURCE, scopes: { 'notes:read': 'Read your notes', 'notes:write': 'Change your notes' } }],
          storage: store,
          // Window 0: the replay below is immediate, which the default grace window would serve.
          refreshTokens: { reuseGraceSeconds: 0 },
          users: [{ username: 'alice', password: 'alice-password' }],
          logger: silentLogger,
        }),
      );
    }
  });

  afterAll(async () => {
    balancer?.closeAllConnections();
    await new Promise<void>((r) => (balancer ? balancer.close(() => r()) : r()));
    for (const s of stores) await s.close();
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await client.end();
  });

  it('login, consent, code, token and refresh succeed while requests alternate between instances', async () => {
    const clientId = (await registerClient(url)).body.client_id;
    const ua = new HeadlessBrowser();
    const { page: login, verifier } = await openAuthorization(url, { client_id: clientId, state: 's' }, ua);
    if (isUrl(login)) throw new Error('expected the login page');
    const consent = await ua.submit(login, { username: 'alice', password: 'alice-password', action: 'login' }, REDIRECT);
    if (isUrl(consent)) throw new Error('expected the consent page');
    const callback = await ua.submit(consent, { action: 'approve' }, REDIRECT);
    if (!isUrl(callback)) throw new Error(`expected a redirect, got ${callback.status}`);
    expect(callback.searchParams.get('iss')).toBe(url);
    const tokens = await exchangeCode(url, clientId, { callback, verifier });
    expect(tokens.status).toBe(200);
    expect(decodeJwt(tokens.body.access_token).payload.aud).toBe(RESOURCE);
    const refreshed = await refreshWith(url, clientId, tokens.body.refresh_token);
    expect(refreshed.status).toBe(200);
    // Reuse detection works across instances too.
    const replay = await refreshWith(url, clientId, tokens.body.refresh_token);
    expect(replay.body.error).toBe('invalid_grant');
    expect(served[0]).toBeGreaterThan(3);
    expect(served[1]).toBeGreaterThan(3);
  });

  it('both instances publish the same JWKS and sign with the same current key', async () => {
    const a = await (await fetch(`${url}/jwks`)).json();
    const b = await (await fetch(`${url}/jwks`)).json();
    expect(a).toEqual(b);
  });
});

describe('instances starting at the same time on one PostgreSQL store', () => {
  const schema = `as_start_${randomBytes(4).toString('hex')}`;
  afterAll(async () => {
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await client.end();
  });

  it('seeding the same users concurrently does not fail start-up', async () => {
    const stores = await Promise.all([0, 1, 2].map(() => openStore({ kind: 'postgres', url: PG_URL, schema })));
    try {
      const servers = await Promise.all(
        stores.map((store) =>
          createAuthorizationServer({
            issuer: 'http://127.0.0.1:1',
            resources: [{ resource: RESOURCE, scopes: { 'notes:read': 'Read' } }],
            storage: store,
            users: [{ username: 'alice', password: 'alice-password' }],
            devAutoLogin: 'ci-bot',
            logger: silentLogger,
          }),
        ),
      );
      expect(servers).toHaveLength(3);
      const accounts = await stores[0]!.accounts.list();
      expect(accounts.filter((a) => a.username === 'alice')).toHaveLength(1);
      expect(accounts.filter((a) => a.username === 'ci-bot')).toHaveLength(1);
    } finally {
      for (const s of stores) await s.close();
    }
  });
});
