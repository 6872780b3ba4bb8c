import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeJwt } from 'jose';
import { runAdmin, type AdminIo } from '@mcp-auth-kit/auth-server';
import { openStore, storageConfigFromEnv, type AccountRecord } from '@mcp-auth-kit/authorization-server';
import { usernameProblem } from '@mcp-auth-kit/protocol';
import { startTestIdp, type TestIdp } from '@mcp-auth-kit/testing';
import {
  startUpstreamIdp,
  UPSTREAM_CLIENT_ID,
  UPSTREAM_CLIENT_SECRET,
  type UpstreamIdp,
} from '../../packages/authorization-server/test/helpers/upstream-idp.js';
import { postForm, registerClient, upstreamSignInToConsent, useAttackStack, type JsonResponse } from './helpers/support.js';
import { secretClient } from '../helpers/clients.js';

/**
 * Account linking trusts only what the operator trusts (issue 40 item 1: account pre-hijack;
 * issue 46 item 7: names). MCP enterprise-managed authorization "Handle Account Linking" and
 * draft-ietf-oauth-identity-assertion-authz-grant §4.4.1 let an AS link an ID-JAG's user to an
 * existing account, and OpenID Connect Core §5.7 warns that only `iss` + `sub` identify a user:
 * an e-mail or a login name another party chose proves nothing. The reproduction: an attacker
 * signs up upstream under pat's e-mail address as login name, then pat's genuine ID-JAG
 * (`email_verified: true`) arrives; before the fix it was linked to the attacker's account.
 */
const GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const SECRET = 'agent-secret-0123456789abcdef';
const agent = secretClient('agent', SECRET, [GRANT]);

describe('attack: account pre-hijack through e-mail linking, and the linking matrix', () => {
  let upstream: UpstreamIdp;
  let acme: TestIdp;
  let other: TestIdp;
  let subjectOnly: TestIdp;
  let closed: TestIdp;
  let clientId: string;

  beforeAll(async () => {
    [upstream, acme, other, subjectOnly, closed] = await Promise.all([
      startUpstreamIdp(),
      startTestIdp(),
      startTestIdp(),
      startTestIdp(),
      startTestIdp(),
    ]);
  });
  afterAll(async () => {
    await Promise.all([upstream?.close(), acme?.close(), other?.close(), subjectOnly?.close(), closed?.close()]);
  });
  const trusted = (name: string, idp: TestIdp, extra: Record<string, unknown> = {}) => ({
    name,
    issuer: idp.issuer,
    jwksUri: idp.jwksUri,
    clients: ['agent'],
    accountMatch: 'email' as const,
    ...extra,
  });
  const stack = useAttackStack(() => ({
    devAutoLogin: undefined,
    authorizationServer: {
      clients: [agent],
      users: [{ username: 'operator-made@acme.example', password: 'operator-password-1' }],
      upstream: [
        {
          name: 'Open IdP',
          issuer: upstream.issuer,
          clientId: UPSTREAM_CLIENT_ID,
          clientSecret: UPSTREAM_CLIENT_SECRET,
          allowSignup: true,
        },
      ],
      idJag: {
        trustedIdps: [
          trusted('Acme IdP', acme),
          trusted('Other IdP', other),
          trusted('Subject IdP', subjectOnly, { accountMatch: 'subject' }),
          trusted('Closed IdP', closed, { createAccounts: false }),
        ],
      },
    },
  }));
  beforeAll(async () => {
    await upstream.configure(`${stack.issuer}/interaction/upstream/callback`);
    clientId = await registerClient(stack);
  });

  const accounts = () => stack.as.server.store.accounts;

  /** Signs up at the AS through the upstream provider with `login` as upstream login name (= its `sub`). */
  async function upstreamSignUp(login: string): Promise<AccountRecord> {
    await upstreamSignInToConsent(stack, clientId, login);
    const account = await accounts().findByUpstreamIdentity(upstream.issuer, login);
    if (!account) throw new Error('the upstream sign-up made no account');
    return account;
  }

  /** Presents an ID-JAG of `idp` for `sub` with these claims; the account id its token is for, or the refusal. */
  async function presentIdJag(
    idp: TestIdp,
    sub: string,
    claims: Record<string, unknown>,
  ): Promise<{ accountId?: string; res: JsonResponse }> {
    const assertion = await idp.idJag({
      sub,
      aud: stack.issuer,
      client_id: 'agent',
      resource: stack.mcpUrl,
      scope: 'notes:read',
      ...claims,
    });
    const res = await postForm(
      stack.metadata.token_endpoint,
      { grant_type: GRANT, assertion },
      { authorization: `Basic ${Buffer.from(`agent:${SECRET}`).toString('base64')}` },
    );
    if (res.status !== 200) return { res };
    return { accountId: String(decodeJwt(String(res.body.access_token)).sub), res };
  }

  it("reproduction: an upstream sign-up under pat@acme.example is NOT linked by pat's genuine ID-JAG (email_verified: true)", async () => {
    const attacker = await upstreamSignUp('pat@acme.example');
    expect(attacker.username).toBe('pat@acme.example');
    const pat = await presentIdJag(acme, 'pat-genuine', { email: 'pat@acme.example', email_verified: true });
    expect(pat.res.status, pat.res.text).toBe(200);
    // The attack: pat's token would be for the attacker's account, pat's identity linked to it.
    expect(pat.accountId).not.toBe(attacker.id);
    const after = await accounts().findById(attacker.id);
    expect(after?.upstreamIdentities).toEqual([`${upstream.issuer} pat@acme.example`]);
    expect(attacker.source).toBe(`upstream:${upstream.issuer}`);
    // pat has an account of their own, made by Acme's IdP, that the attacker cannot sign in to.
    const own = await accounts().findById(pat.accountId!);
    expect(own?.upstreamIdentities).toEqual([`${acme.issuer} pat-genuine`]);
    expect(own?.source).toBe(`id-jag:${acme.issuer}`);
    expect(own?.username).not.toBe('pat@acme.example');
  });

  it("reproduction (lookalike): an upstream sign-up as ｌｅｅ@ａｃｍｅ.example neither gets that name nor lee's ID-JAG", async () => {
    const attacker = await upstreamSignUp('ｌｅｅ@ａｃｍｅ.example');
    const lee = await presentIdJag(acme, 'lee-genuine', { email: 'lee@acme.example', email_verified: true });
    expect(lee.res.status, lee.res.text).toBe(200);
    expect(lee.accountId).not.toBe(attacker.id);
    expect((await accounts().findById(lee.accountId!))?.username).toBe('lee@acme.example');
    // The attacker's account does not carry the lookalike either (two names `user list` cannot tell apart).
    expect(usernameProblem(attacker.username)).toBeUndefined();
    expect(attacker.username).not.toContain('ａｃｍｅ');
  });

  it('a verified e-mail spelt in full-width letters links nothing (not the address the operator named)', async () => {
    const kim = await accounts().create({ id: randomUUID(), username: 'kim@acme.example', passwordHash: null, disabled: false });
    const res = await presentIdJag(acme, 'kim-fullwidth', { email: 'ｋｉｍ@ａｃｍｅ.example', email_verified: true });
    expect(res.res.status, res.res.text).toBe(200);
    expect(res.accountId).not.toBe(kim.id);
    expect((await accounts().findById(kim.id))?.upstreamIdentities).toEqual([]);
  });

  describe('matrix: an ID-JAG (accountMatch "email", verified e-mail) meets an account with that username', () => {
    /** An existing account for `email` with this origin, made through the real path where there is one. */
    async function existing(source: string, email: string): Promise<AccountRecord> {
      switch (source) {
        case 'operator':
          return accounts().create({ id: randomUUID(), username: email, passwordHash: null, disabled: false });
        case 'upstream sign-up':
          return upstreamSignUp(email);
        case 'ID-JAG of the same IdP':
          return accounts().findById(
            (await presentIdJag(acme, `old-${email}`, { email, email_verified: true })).accountId!,
          ) as Promise<AccountRecord>;
        case 'ID-JAG of another IdP':
          return accounts().findById(
            (await presentIdJag(other, `other-${email}`, { email, email_verified: true })).accountId!,
          ) as Promise<AccountRecord>;
        case 'unknown (row older than the source field, with an upstream identity)':
          return accounts().create({
            id: randomUUID(),
            username: email,
            passwordHash: null,
            disabled: false,
            upstreamIdentities: [`https://legacy.example ${email}`],
            source: 'unknown',
          });
        default:
          throw new Error(source);
      }
    }

    const rows: Array<[string, 'linked' | 'own account']> = [
      ['operator', 'linked'],
      ['ID-JAG of the same IdP', 'linked'],
      ['ID-JAG of another IdP', 'own account'],
      ['upstream sign-up', 'own account'],
      ['unknown (row older than the source field, with an upstream identity)', 'own account'],
    ];
    for (const [[source, outcome], i] of rows.map((r, n) => [r, n] as const)) {
      it(`existing account made by: ${source} → ${outcome}`, async () => {
        const email = `row${i}@acme.example`;
        const account = await existing(source, email);
        expect(account.username).toBe(email);
        const before = account.upstreamIdentities ?? [];
        const got = await presentIdJag(acme, `matrix-${i}`, { email, email_verified: true });
        expect(got.res.status, got.res.text).toBe(200);
        const now = await accounts().findById(account.id);
        if (outcome === 'linked') {
          expect(got.accountId).toBe(account.id);
          expect(now?.upstreamIdentities).toEqual([...before, `${acme.issuer} matrix-${i}`]);
        } else {
          expect(got.accountId).not.toBe(account.id);
          expect(now?.upstreamIdentities).toEqual(before);
          expect((await accounts().findById(got.accountId!))?.source).toBe(`id-jag:${acme.issuer}`);
        }
      });
    }

    it('operator account, e-mail NOT verified → own account (only a verified attribute links)', async () => {
      const account = await existing('operator', 'unverified@acme.example');
      const got = await presentIdJag(acme, 'unverified-1', { email: 'unverified@acme.example', email_verified: false });
      expect(got.res.status, got.res.text).toBe(200);
      expect(got.accountId).not.toBe(account.id);
      expect((await accounts().findById(account.id))?.upstreamIdentities).toEqual([]);
    });

    it('operator account, IdP with accountMatch "subject" → own account (e-mail never consulted)', async () => {
      const account = await existing('operator', 'subject@acme.example');
      const got = await presentIdJag(subjectOnly, 'subject-1', { email: 'subject@acme.example', email_verified: true });
      expect(got.res.status, got.res.text).toBe(200);
      expect(got.accountId).not.toBe(account.id);
    });

    it('upstream sign-up, IdP with createAccounts: false → refused (invalid_grant), the sign-up is not adopted', async () => {
      const account = await existing('upstream sign-up', 'closed@acme.example');
      const got = await presentIdJag(closed, 'closed-1', { email: 'closed@acme.example', email_verified: true });
      expect(got.res.status).toBe(400);
      expect(got.res.body.error).toBe('invalid_grant');
      expect((await accounts().findById(account.id))?.upstreamIdentities).toEqual([`${upstream.issuer} closed@acme.example`]);
    });

    it('operator account (configured user), IdP with createAccounts: false → linked', async () => {
      const account = (await accounts().findByUsername('operator-made@acme.example'))!;
      expect(account.source).toBe('operator');
      const got = await presentIdJag(closed, 'closed-2', { email: 'operator-made@acme.example', email_verified: true });
      expect(got.res.status, got.res.text).toBe(200);
      expect(got.accountId).toBe(account.id);
    });

    it('upstream sign-in never adopts an existing account by name, whatever its origin (OpenID Connect Core §5.7)', async () => {
      const operator = await existing('operator', 'upname@acme.example');
      const signedUp = await upstreamSignUp('upname@acme.example');
      expect(signedUp.id).not.toBe(operator.id);
      expect(signedUp.username).toMatch(/^upname@acme\.example-/);
      expect((await accounts().findById(operator.id))?.upstreamIdentities).toEqual([]);
    });
  });

  describe('names: what a remote party or an operator types is never planted as a username', () => {
    const BAD = [
      ['ZWSP', 'alice\u200b'],
      ['TAB', 'ali\tce'],
      ['LF', 'alice\nadmin'],
      ['100 KB', 'a'.repeat(100 * 1024)],
    ] as const;

    for (const [what, name] of BAD) {
      it(`upstream sign-up with a ${what} login name (preferred_username, email, sub): a safe, distinct username`, async () => {
        const account = await upstreamSignUp(name);
        expect(usernameProblem(account.username)).toBeUndefined();
        expect(account.username).not.toBe(name);
        expect(account.username.length).toBeLessThanOrEqual(100);
        // The `name` claim ("Upstream <login>") is shown made safe and bounded.
        expect(account.displayName).toBeDefined();
        expect(account.displayName!).not.toMatch(/[\u200b\t\n]/);
        expect([...account.displayName!].length).toBeLessThanOrEqual(100);
      });

      it(`ID-JAG just-in-time account with a ${what} e-mail, subject and name: a safe username`, async () => {
        let claimed: string = name;
        if (what === '100 KB') {
          // So large an assertion does not reach the grant: the token endpoint refuses the body.
          const whole = await presentIdJag(acme, 'jit-whole', { email: `${name}@acme.example`, email_verified: true, name });
          expect(whole.res.status).toBe(400);
          expect(await accounts().findByUpstreamIdentity(acme.issuer, 'jit-whole')).toBeUndefined();
          claimed = 'a'.repeat(10 * 1024);
        }
        const sub = `jit-${what}-${claimed.slice(0, 2000)}`;
        const got = await presentIdJag(acme, sub, { email: `${claimed}@acme.example`, email_verified: true, name: claimed });
        expect(got.res.status, got.res.text).toBe(200);
        const account = (await accounts().findById(got.accountId!))!;
        expect(usernameProblem(account.username)).toBeUndefined();
        expect(account.username).not.toContain(claimed.slice(0, 12));
        expect(account.displayName).toBeDefined();
        expect(account.displayName!).not.toMatch(/[\u200b\t\n]/);
        expect([...account.displayName!].length).toBeLessThanOrEqual(100);
      });
    }

    it('admin user add refuses each (exit 2, nothing created, the name is not echoed)', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'mcp-auth-kit-names-'));
      try {
        const env = { DATA_DIR: dir, AS_ADMIN_PASSWORD: 'operator-password-1' };
        for (const [what, name] of BAD) {
          const err: string[] = [];
          const io: AdminIo = { out: () => {}, err: (l) => err.push(l), readPassword: async () => 'operator-password-1' };
          expect(await runAdmin(['user', 'add', name], env, io), what).toBe(2);
          expect(err.join('\n'), what).toMatch(/username refused \((invisible-character|control-character|too-long)\)/);
          expect(err.join('\n')).not.toContain(name);
        }
        const ok: AdminIo = { out: () => {}, err: () => {}, readPassword: async () => 'operator-password-1' };
        expect(await runAdmin(['user', 'add', 'alice'], env, ok)).toBe(0);
        const store = await openStore(storageConfigFromEnv({ DATA_DIR: dir }));
        try {
          expect((await store.accounts.list()).map((a) => [a.username, a.source])).toEqual([['alice', 'operator']]);
        } finally {
          await store.close();
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
});
