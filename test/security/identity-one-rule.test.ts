import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { walkSources } from '@mcp-auth-kit/test-utils';

/**
 * One canonical identity (issue 40 items 1 and 3): the account lookup folded NFKC + case, the
 * login throttle only case, ID-JAG linking trim + case, so `𝖇𝖔𝖇` signed in as bob but counted
 * against a lock of its own. What a username or an e-mail is for lookup, uniqueness, the throttle
 * and linking is decided by `identityKey` / `usernameProblem` of @mcp-auth-kit/protocol only;
 * this scan fails when another source folds names itself again.
 */
const ROOT = join(import.meta.dirname, '..', '..');

const SKIP = ['node_modules', 'dist', 'test'];

const files = ['packages', 'apps']
  .flatMap((dir) => walkSources(join(ROOT, dir), { skip: SKIP }))
  .map((path) => ({ path: relative(ROOT, path), text: readFileSync(path, 'utf8') }))
  .filter(({ path }) => !path.startsWith('packages/protocol/'));

/** Passwords keep their own NFKC (RFC 8265 §4.2 OpaqueString): they are compared, never looked up. */
const NORMALIZE_ALLOWED = new Set(['packages/authorization-server/src/accounts/passwords.ts']);

/** Files on the account paths: storage backends, login, throttle, linking, sign-up, seeding, admin, test kit. */
const ACCOUNT_PATHS = [
  'packages/authorization-server/src/storage/accounts.ts',
  'packages/authorization-server/src/storage/memory/accounts.ts',
  'packages/authorization-server/src/storage/sqlite/accounts.ts',
  'packages/authorization-server/src/storage/postgres/accounts.ts',
  'packages/authorization-server/src/interactions/login.ts',
  'packages/authorization-server/src/interactions/throttle.ts',
  'packages/authorization-server/src/grants/jwt-bearer/accounts.ts',
  'packages/authorization-server/src/upstream/login.ts',
  'packages/authorization-server/src/accounts/accounts.ts',
  'packages/authorization-server/src/accounts/account-names.ts',
  'packages/authorization-server/src/accounts/account-origin.ts',
  'apps/auth-server/src/admin.ts',
  'apps/auth-server/src/admin-users.ts',
  'packages/testing/src/test-accounts.ts',
];

const CASE_FOLD = /\.(?:toLowerCase|toUpperCase|toLocaleLowerCase|toLocaleUpperCase)\(|\.localeCompare\(|Intl\.Collator/;
/** A fold applied to something named like an account name, anywhere. */
const NAME_FOLD = /\b\w*(?:user(?:name)?|email|login|account)\w*\??\.(?:trim\(\)\.)?(?:normalize\(|toLowerCase\(|toUpperCase\()/i;

describe('one rule, one place: account names are folded by @mcp-auth-kit/protocol identity.ts only', () => {
  it('the scan sees the sources (guards against a scan that checks nothing)', () => {
    expect(files.length).toBeGreaterThan(50);
    for (const path of ACCOUNT_PATHS)
      expect(
        files.some((f) => f.path === path),
        path,
      ).toBe(true);
  });

  it('no source outside packages/protocol calls .normalize( (passwords excepted)', () => {
    const offenders = files.filter(({ path, text }) => /\.normalize\(/.test(text) && !NORMALIZE_ALLOWED.has(path)).map((f) => f.path);
    expect(offenders).toEqual([]);
  });

  it('no file on an account path folds case itself', () => {
    const offenders = files.filter(({ path, text }) => ACCOUNT_PATHS.includes(path) && CASE_FOLD.test(text)).map((f) => f.path);
    expect(offenders).toEqual([]);
  });

  it('no source folds a username, e-mail or login name itself', () => {
    const offenders = files.filter(({ text }) => NAME_FOLD.test(text)).map((f) => f.path);
    expect(offenders).toEqual([]);
  });

  it('the account paths that compare or create names import the shared rule', () => {
    for (const path of [
      'packages/authorization-server/src/storage/accounts.ts',
      'packages/authorization-server/src/interactions/throttle.ts',
      'packages/authorization-server/src/grants/jwt-bearer/accounts.ts',
      'packages/authorization-server/src/upstream/login.ts',
      'packages/authorization-server/src/accounts/account-names.ts',
      'apps/auth-server/src/admin-users.ts',
      'packages/testing/src/test-accounts.ts',
    ]) {
      expect(files.find((f) => f.path === path)!.text, path).toMatch(/from '@mcp-auth-kit\/protocol'/);
    }
  });

  it('every backend computes username_key with the shared key (storage/accounts.ts re-exports identityKey)', () => {
    const accounts = files.find((f) => f.path === 'packages/authorization-server/src/storage/accounts.ts')!.text;
    expect(accounts).toMatch(/export const usernameKey\b.*= identityKey;/);
    for (const path of ['storage/memory/accounts.ts', 'storage/sqlite/accounts.ts', 'storage/postgres/accounts.ts']) {
      expect(files.find((f) => f.path === `packages/authorization-server/src/${path}`)!.text, path).toMatch(/usernameKey\(/);
    }
  });
});
