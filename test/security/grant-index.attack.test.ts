import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdmin, type AdminIo } from '@mcp-auth-kit/auth-server';
import { listAccountGrants, revokeRememberedGrant } from '@mcp-auth-kit/authorization-server';
import { HeadlessBrowser } from '@mcp-auth-kit/test-utils';
import { startTestIdp } from '@mcp-auth-kit/testing';
import { SignJWT, decodeJwt, exportJWK, generateKeyPair, type JWK } from 'jose';
import { CookieJar } from 'tough-cookie';
import {
  NATIVE_REDIRECT,
  authorizationUrl,
  frontChannel,
  pkcePair,
  postForm,
  registerClient,
  useAttackStack,
  type JsonResponse,
} from './helpers/support.js';
import { sharedForSuite } from '../helpers/suite.js';
import { advertisedGrantInventory, authorizationServerSources, expectListedGrantRegistrations } from './helpers/grant-types.js';
import { JWT_BEARER, secretClient } from '../helpers/clients.js';
import { completeConnect, exchange, TOKEN_EXCHANGE, useDemoDrive, VAULT_CLIENT, VAULT_MCP, withVault } from './helpers/third-party-flow.js';

/**
 * Every grant the AS creates is the user's to see and end (issue 40, finding 4). Whatever grant
 * type created it (authorization code + consent, the ID-JAG jwt-bearer grant, any later one),
 * the Grant is in the account's grant index (interactions/remembered-grants.ts): listed on
 * `/account` and by `admin grants list`, and revocable from both with the same reach — the
 * Grant record the access token's `grant_id` names is destroyed (what introspection and the
 * revocation signal key on, RFC 7009 §2.1 "the authorization server ... SHOULD also invalidate
 * ... tokens based on the same authorization grant"), and the refresh token is refused.
 *
 * The table has one row per grant type the AS advertises (RFC 8414 `grant_types_supported`, the
 * enumeration sender-constraint.attack.test.ts uses too): `creates` rows are checked end to end;
 * `none` rows prove the grant type creates no Grant of its own. A grant type added later fails
 * the guard until it has a row here.
 */
const SECRET = 'grant-index-secret-0123456789';
const AGENT = 'grant-index-agent';
const MACHINE = 'grant-index-machine';
const ASSERTING = 'grant-index-asserting';
let assertingKey: Awaited<ReturnType<typeof generateKeyPair>>;
let assertingJwk: JWK;
/** The ID-JAG subject, linked to the demo account (the one DEV_AUTO_LOGIN signs in). */
const SUB = 'U-grant-index';

interface Issued {
  clientId: string;
  accessToken: string;
  refresh(): Promise<JsonResponse>;
}

interface Row {
  grant: string;
  kind: 'creates' | 'none';
  name: string;
  /** `creates`: tokens for the demo account, with `jar` holding the demo account's browser session. */
  issue?(jar: CookieJar): Promise<Issued>;
  /** `none`: the proof that no Grant is created. */
  run?(): Promise<void>;
}

function adminIo() {
  const out: string[] = [];
  const err: string[] = [];
  const io: AdminIo = { out: (l) => out.push(l), err: (l) => err.push(l), readPassword: async () => '' };
  return { io, out, err };
}

describe('attack: a grant the user and the operator cannot see or end (issue 40 finding 4: ID-JAG grants outside the account index)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'grant-index-'));
  const env = { DATABASE_URL: `sqlite:${join(dir, 'as.sqlite')}` };
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const idp = sharedForSuite(startTestIdp);
  const provider = useDemoDrive([]);
  let demoId: string;

  beforeAll(async () => {
    assertingKey = await generateKeyPair('ES256');
    assertingJwk = { ...(await exportJWK(assertingKey.publicKey)), kid: 'asserting', alg: 'ES256' };
  });
  const stack = useAttackStack(() =>
    withVault(provider, {
      storage: { kind: 'sqlite', file: join(dir, 'as.sqlite') },
      authorizationServer: {
        clients: [
          secretClient(AGENT, SECRET, [JWT_BEARER, 'refresh_token']),
          secretClient(MACHINE, SECRET, ['client_credentials'], { scope: 'notes:read' }),
          // signs its own assertions (RFC 7523 §2.1, MCP client credentials) and authenticates besides
          secretClient(ASSERTING, SECRET, [JWT_BEARER], { jwks: { keys: [assertingJwk] }, scope: 'notes:read' }),
        ],
        idJag: {
          refreshTokens: true,
          trustedIdps: [{ name: 'Acme IdP', issuer: idp.issuer, jwksUri: idp.jwksUri, clients: [AGENT] }],
        },
      },
    }),
  );
  beforeAll(async () => {
    provider.redirectUri = `${stack.issuer}/connect/callback`;
    const demo = await stack.as.server.store.accounts.findByUsername('demo');
    if (!demo) throw new Error('the demo account is missing');
    demoId = demo.id;
    // The operator links the IdP's user to the account (admin tool), so ID-JAGs for SUB are demo's.
    const link = adminIo();
    expect(await runAdmin(['user', 'link', 'demo', idp.issuer, SUB], env, link.io), link.err.join('\n')).toBe(0);
  });

  const basic = (clientId: string) => `Basic ${Buffer.from(`${clientId}:${SECRET}`).toString('base64')}`;

  /** A code flow in `jar` (DEV_AUTO_LOGIN signs in demo and leaves the browser session there). */
  async function codeFlow(jar: CookieJar, resource = stack.mcpUrl): Promise<Issued> {
    const clientId = await registerClient(stack);
    const { verifier, challenge } = pkcePair();
    const result = await frontChannel(stack.issuer, authorizationUrl(stack, { clientId, challenge, resource }), jar);
    if (result.kind !== 'callback') throw new Error(`authorization stopped: ${result.status}`);
    const res = await postForm(stack.metadata.token_endpoint, {
      grant_type: 'authorization_code',
      code: result.url.searchParams.get('code')!,
      redirect_uri: NATIVE_REDIRECT,
      client_id: clientId,
      code_verifier: verifier,
      resource,
    });
    expect(res.status, res.text).toBe(200);
    const refreshToken = String(res.body.refresh_token);
    return {
      clientId,
      accessToken: String(res.body.access_token),
      refresh: () =>
        postForm(stack.metadata.token_endpoint, { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId }),
    };
  }

  async function idJagTokens(): Promise<Issued> {
    const assertion = await idp.idJag({ sub: SUB, aud: stack.issuer, client_id: AGENT, resource: stack.mcpUrl, scope: 'notes:read' });
    const res = await postForm(stack.metadata.token_endpoint, { grant_type: JWT_BEARER, assertion }, { authorization: basic(AGENT) });
    expect(res.status, res.text).toBe(200);
    expect(res.body.refresh_token).toBeTypeOf('string');
    const refreshToken = String(res.body.refresh_token);
    return {
      clientId: AGENT,
      accessToken: String(res.body.access_token),
      refresh: () =>
        postForm(
          stack.metadata.token_endpoint,
          { grant_type: 'refresh_token', refresh_token: refreshToken },
          { authorization: basic(AGENT) },
        ),
    };
  }

  const grantIdOf = (accessToken: string) => decodeJwt(accessToken).grant_id as string | undefined;

  const TABLE: Row[] = [
    {
      grant: 'authorization_code',
      kind: 'creates',
      name: 'consent (interactions/consent.ts) remembers the grant the code is issued from',
      issue: codeFlow,
    },
    {
      grant: JWT_BEARER,
      kind: 'creates',
      name: 'the ID-JAG grant (grants/jwt-bearer/grant.ts) remembers the grant its tokens are issued from',
      async issue(jar) {
        await codeFlow(jar); // only for demo's browser session (the account page)
        return idJagTokens();
      },
    },
    {
      grant: 'refresh_token',
      kind: 'none',
      name: 'RFC 6749 §6: a refresh stays on the grant of the refresh token (no new Grant)',
      async run() {
        const issued = await codeFlow(new CookieJar());
        const before = await listAccountGrants(stack.as.server.store, demoId);
        const refreshed = await issued.refresh();
        expect(refreshed.status, refreshed.text).toBe(200);
        expect(grantIdOf(String(refreshed.body.access_token))).toBe(grantIdOf(issued.accessToken));
        expect(await listAccountGrants(stack.as.server.store, demoId)).toEqual(before);
      },
    },
    {
      grant: TOKEN_EXCHANGE,
      kind: 'none',
      name: "RFC 8693: the exchange hands out the provider's token: no Grant of ours; the user sees and ends the connection itself on the account page",
      async run() {
        const jar = new CookieJar();
        const subject = (await codeFlow(jar, VAULT_MCP)).accessToken;
        const first = await exchange(stack.issuer, VAULT_CLIENT, subject);
        expect(first.body.error, first.text).toBe('interaction_required');
        const connected = await completeConnect(String(first.body.connect_uri), new HeadlessBrowser({ jar }), {
          providerUser: { username: 'demo-drive', password: 'drive-pass' },
          provider,
        });
        expect(connected.body).toContain('Drive is connected');
        const before = await listAccountGrants(stack.as.server.store, demoId);
        const res = await exchange(stack.issuer, VAULT_CLIENT, subject);
        expect(res.status, res.text).toBe(200);
        expect(await listAccountGrants(stack.as.server.store, demoId)).toEqual(before);
        // the connection is the user's to see and end
        const page = await accountPage(jar);
        expect(page).toContain('Disconnect Drive');
        const csrf = /name="csrf" value="([^"]+)"/.exec(page)![1]!;
        const done = await new HeadlessBrowser({ jar }).request(`${stack.issuer}/account`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ csrf, action: 'disconnect', provider: 'drive' }),
        });
        expect(done.status).toBe(303);
        expect(await accountPage(jar)).not.toContain('Disconnect Drive');
        expect((await exchange(stack.issuer, VAULT_CLIENT, subject)).body.error).toBe('interaction_required');
      },
    },
    {
      grant: JWT_BEARER,
      kind: 'none',
      name: "RFC 7523 §2.1 with the client's own assertion (grants/jwt-bearer/client-assertion-grant.ts): the client acts for itself: no account, no Grant",
      async run() {
        const now = Math.floor(Date.now() / 1000);
        const assertion = await new SignJWT({ iss: ASSERTING, sub: ASSERTING, aud: stack.issuer, jti: crypto.randomUUID(), exp: now + 60 })
          .setProtectedHeader({ alg: 'ES256', kid: 'asserting', typ: 'JWT' })
          .sign(assertingKey.privateKey);
        const res = await postForm(
          stack.metadata.token_endpoint,
          { grant_type: JWT_BEARER, assertion, scope: 'notes:read', resource: stack.mcpUrl },
          { authorization: basic(ASSERTING) },
        );
        expect(res.status, res.text).toBe(200);
        expect(grantIdOf(String(res.body.access_token))).toBeUndefined();
        expect(res.body.refresh_token).toBeUndefined();
      },
    },
    {
      grant: 'client_credentials',
      kind: 'none',
      name: 'RFC 6749 §4.4: the client acts for itself: no account, no Grant',
      async run() {
        const res = await postForm(
          stack.metadata.token_endpoint,
          { grant_type: 'client_credentials', scope: 'notes:read', resource: stack.mcpUrl },
          { authorization: basic(MACHINE) },
        );
        expect(res.status, res.text).toBe(200);
        expect(grantIdOf(String(res.body.access_token))).toBeUndefined();
        expect(res.body.refresh_token).toBeUndefined();
      },
    },
  ];

  async function adminList(): Promise<string> {
    const r = adminIo();
    expect(await runAdmin(['grants', 'list', 'demo'], env, r.io), r.err.join('\n')).toBe(0);
    return r.out.join('\n');
  }

  async function accountPage(jar: CookieJar) {
    const page = await new HeadlessBrowser({ jar }).request(`${stack.issuer}/account`);
    expect(page.status, page.body.slice(0, 300)).toBe(200);
    return page.body;
  }

  /** Listed by the admin tool and on the account page, with the grant its access token names. */
  async function expectListed(jar: CookieJar, issued: Issued) {
    expect(await adminList()).toContain(`${issued.clientId}\t`);
    expect(await accountPage(jar)).toContain(issued.clientId);
    const grants = await listAccountGrants(stack.as.server.store, demoId);
    expect(grants.find((g) => g.clientId === issued.clientId)?.grantId).toBe(grantIdOf(issued.accessToken));
  }

  /** Gone everywhere: the listings, the Grant record the access token names, the refresh token. */
  async function expectEnded(jar: CookieJar, issued: Issued) {
    expect(await adminList()).not.toContain(`${issued.clientId}\t`);
    expect(await accountPage(jar)).not.toContain(issued.clientId);
    expect(await stack.as.server.store.adapter('Grant').find(grantIdOf(issued.accessToken)!)).toBeUndefined();
    const res = await issued.refresh();
    expect(res.status, res.text).toBe(400);
    expect(res.body.error).toBe('invalid_grant');
    expect(res.body.access_token).toBeUndefined();
  }

  const creating = TABLE.filter((r) => r.kind === 'creates');

  it.each(creating.map((row) => [row.grant, row.name, row] as const))(
    '%s: %s — listed; `admin grants revoke` ends it and its refresh token',
    async (_grant, _name, row) => {
      const jar = new CookieJar();
      const issued = await row.issue!(jar);
      await expectListed(jar, issued);
      const r = adminIo();
      expect(await runAdmin(['grants', 'revoke', 'demo', issued.clientId], env, r.io), r.err.join('\n')).toBe(0);
      await expectEnded(jar, issued);
    },
  );

  it.each(creating.map((row) => [row.grant, row.name, row] as const))(
    '%s: %s — listed; the account page revoke ends it and its refresh token',
    async (_grant, _name, row) => {
      const jar = new CookieJar();
      const issued = await row.issue!(jar);
      await expectListed(jar, issued);
      const page = await accountPage(jar);
      const csrf = /name="csrf" value="([^"]+)"/.exec(page)![1]!;
      const revoked = await new HeadlessBrowser({ jar }).request(`${stack.issuer}/account`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ csrf, action: 'revoke', client_id: issued.clientId }),
      });
      expect(revoked.status).toBe(303);
      await expectEnded(jar, issued);
    },
  );

  it.each(TABLE.filter((r) => r.kind === 'none').map((row) => [row.grant, row.name, row] as const))(
    '%s: %s',
    async (_grant, _name, row) => {
      await row.run!();
    },
  );

  it('repeated ID-JAG exchanges for one (user, client) share one grant: one entry, and one revoke ends every token', async () => {
    const first = await idJagTokens();
    const second = await idJagTokens();
    expect(grantIdOf(second.accessToken)).toBe(grantIdOf(first.accessToken));
    expect((await listAccountGrants(stack.as.server.store, demoId)).filter((g) => g.clientId === AGENT)).toHaveLength(1);
    const r = adminIo();
    expect(await runAdmin(['grants', 'revoke', 'demo', AGENT], env, r.io), r.err.join('\n')).toBe(0);
    for (const issued of [first, second]) expect((await issued.refresh()).body.error).toBe('invalid_grant');
    // A new exchange after the revocation starts a new grant, listed again.
    const third = await idJagTokens();
    expect(grantIdOf(third.accessToken)).not.toBe(grantIdOf(first.accessToken));
    expect((await listAccountGrants(stack.as.server.store, demoId)).map((g) => g.grantId)).toContain(grantIdOf(third.accessToken));
  });

  it('concurrent first ID-JAG exchanges for one (user, client) still share one grant: the revoke reaches every refresh token', async () => {
    // A client racing exchanges must not end up with a grant outside the index (one the user's
    // revoke cannot reach). A fresh user: no grant to reuse yet.
    const sub = `U-race-${Date.now()}`;
    const exchange = async () => {
      const assertion = await idp.idJag({ sub, aud: stack.issuer, client_id: AGENT, resource: stack.mcpUrl, scope: 'notes:read' });
      const res = await postForm(stack.metadata.token_endpoint, { grant_type: JWT_BEARER, assertion }, { authorization: basic(AGENT) });
      expect(res.status, res.text).toBe(200);
      return res.body;
    };
    const bodies = await Promise.all(Array.from({ length: 6 }, exchange));
    const grantIds = new Set(bodies.map((b) => grantIdOf(String(b.access_token))));
    expect(grantIds.size).toBe(1);
    const account = (await stack.as.server.store.accounts.findByUpstreamIdentity(idp.issuer, sub))!;
    expect(await revokeRememberedGrant(stack.as.server.store, account.id, AGENT)).toBe(true);
    for (const b of bodies) {
      const res = await postForm(
        stack.metadata.token_endpoint,
        { grant_type: 'refresh_token', refresh_token: String(b.refresh_token) },
        { authorization: basic(AGENT) },
      );
      expect(res.body.error, res.text).toBe('invalid_grant');
    }
  });

  it('enumeration guard: every grant type the AS advertises (RFC 8414 grant_types_supported) has a row', async () => {
    const advertised = await advertisedGrantInventory(stack.issuer);
    expect(advertised.filter((g) => !TABLE.some((r) => r.grant === g))).toEqual([]);
    expect(TABLE.filter((r) => !advertised.includes(r.grant)).map((r) => r.grant)).toEqual([]);
  });

  it('enumeration guard: Grants are created only where they are remembered (new Grant(...) sites in the AS sources)', () => {
    const sources = authorizationServerSources();
    const creating = sources
      .filter((f) => /new\s+(?:[\w.]+\.)?Grant\s*\(/.test(f.text))
      .map((f) => f.path)
      .sort();
    // interactions/grant.ts builds consent's grant, which consent.ts remembers; the ID-JAG grant
    // remembers its own. A new site needs the same, and a row in TABLE above.
    expect(creating).toEqual(['grants/jwt-bearer/grant.ts', 'interactions/grant.ts']);
    expectListedGrantRegistrations();
    const text = (path: string) => sources.find((f) => f.path === path)?.text ?? '';
    expect(text('grants/jwt-bearer/grant.ts')).toMatch(/\.remember\(/);
    expect(text('interactions/consent.ts')).toMatch(/\.remember\(/);
  });
});
