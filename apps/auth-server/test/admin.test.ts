import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore, verifyPassword } from '@mcp-auth-kit/authorization-server';
import { runAdmin, type AdminIo } from '../src/admin.js';

const PG_URL = process.env.TEST_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test';
const schema = `as_admin_${randomBytes(4).toString('hex')}`;
const env = { DATABASE_URL: PG_URL, DATABASE_SCHEMA: schema };
const configDir = mkdtempSync(join(tmpdir(), 'as-admin-config-'));

/** The environment with an AS_CONFIG_FILE holding `settings` (what the server would read). */
function withConfig(settings: Record<string, unknown>) {
  const file = join(configDir, `${randomBytes(4).toString('hex')}.json`);
  writeFileSync(file, JSON.stringify(settings));
  return { ...env, AS_CONFIG_FILE: file };
}

async function signingKeys() {
  const store = await openStore({ kind: 'postgres', url: PG_URL, schema });
  try {
    return await store.keys.signingKeys();
  } finally {
    await store.close();
  }
}

function io(password = '') {
  const out: string[] = [];
  const err: string[] = [];
  const value: AdminIo = { out: (l) => out.push(l), err: (l) => err.push(l), readPassword: async () => password };
  return { io: value, out, err };
}

describe('admin tool (npm run admin)', () => {
  afterAll(async () => {
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await client.end();
    rmSync(configDir, { recursive: true, force: true });
  });

  it('user add / set-password / disable / list work on the shared store; passwords never printed', async () => {
    const add = io('first-password');
    expect(await runAdmin(['user', 'add', 'carol', '--display-name', 'Carol'], env, add.io)).toBe(0);
    expect(add.out.join('\n')).toMatch(/created user carol/);
    const dup = io('first-password');
    expect(await runAdmin(['user', 'add', 'carol'], env, dup.io)).toBe(1);
    expect(dup.err).toEqual(['error: user "carol" already exists; nothing changed']);
    const change = io('second-password');
    expect(await runAdmin(['user', 'set-password', 'carol'], env, change.io)).toBe(0);
    expect(await runAdmin(['user', 'disable', 'carol'], env, io().io)).toBe(0);
    const list = io();
    expect(await runAdmin(['user', 'list'], env, list.io)).toBe(0);
    expect(list.out.join('\n')).toMatch(/carol\t.*\tdisabled\tCarol/);
    for (const r of [add, change, list]) expect([...r.out, ...r.err].join('\n')).not.toMatch(/first-password|second-password/);

    const store = await openStore({ kind: 'postgres', url: PG_URL, schema });
    try {
      const carol = await store.accounts.findByUsername('carol');
      expect(carol?.disabled).toBe(true);
      expect(await verifyPassword('second-password', carol!.passwordHash)).toBe(true);
      expect(await verifyPassword('first-password', carol!.passwordHash)).toBe(false);
    } finally {
      await store.close();
    }
  });

  it('runtime errors print the error alone (exit 1); only usage errors print the usage (exit 2)', async () => {
    const short = io('short');
    expect(await runAdmin(['user', 'add', 'dave'], env, short.io)).toBe(1);
    expect(short.err).toEqual(['error: the password must have at least 8 characters; nothing changed']);
    const empty = io('');
    expect(await runAdmin(['user', 'add', 'dave'], env, empty.io)).toBe(1);
    expect(empty.err).toEqual([
      'error: no password given: type it at the prompt, pipe it as the first line of stdin, or set AS_ADMIN_PASSWORD',
    ]);
    const nobody = io('long-enough-password');
    expect(await runAdmin(['user', 'set-password', 'nobody'], env, nobody.io)).toBe(1);
    expect(nobody.err).toEqual(['error: no such user "nobody" (`npm run admin -- user list` lists them)']);
    const unknown = io();
    expect(await runAdmin(['frobnicate'], env, unknown.io)).toBe(2);
    expect(unknown.err[0]).toBe('error: unknown command "frobnicate"');
    expect(unknown.err[1]).toMatch(/^usage: npm run admin -- <command>/);
    const missing = io();
    expect(await runAdmin(['user', 'disable'], env, missing.io)).toBe(2);
    expect(missing.err[0]).toBe('error: user disable needs a username');
    expect(missing.err[1]).toMatch(/^usage: /);
    const none = io();
    expect(await runAdmin([], env, none.io)).toBe(2);
    expect(none.err[0]).toBe('error: no command given');
  });

  it('the usage names only commands that exist in this repository (never a registry package name npx would fetch)', async () => {
    const help = io();
    expect(await runAdmin(['--help'], env, help.io)).toBe(0);
    const text = help.out.join('\n');
    expect(text).toMatch(/^usage: npm run admin -- <command>/);
    expect(text).toContain('node apps/auth-server/dist/admin-main.js <command>');
    expect(text).not.toMatch(/mcp-auth-server-admin|npx/);
  });

  it('keys rotate makes the next key current and keeps the old one published', async () => {
    const before = io();
    expect(await runAdmin(['keys', 'list'], env, before.io)).toBe(0);
    const oldCurrent = before.out.find((l) => l.startsWith('current'))!.split('\t')[1];
    const rotate = io();
    expect(await runAdmin(['keys', 'rotate', '--retire-after', '3600'], env, rotate.io)).toBe(0);
    const lines = rotate.out.join('\n');
    expect(lines).toContain(`retired\t${oldCurrent}`);
    expect(lines).toMatch(/^current\t/m);
    expect(lines).not.toContain(`current\t${oldCurrent}`);
  });

  it('RFC 9068 §4 (resource servers verify with the published keys): keys rotate refuses a --retire-after shorter than the longest token lifetime (ID token 3600 s by default)', async () => {
    const before = await signingKeys();
    for (const value of ['0', '3599']) {
      const r = io();
      expect(await runAdmin(['keys', 'rotate', '--retire-after', value], env, r.io)).toBe(2);
      expect(r.err).toHaveLength(1); // the reason alone, no usage
      const message = r.err.join('\n');
      expect(message).toContain(`--retire-after ${value} is too short`);
      expect(message).toContain('at least 3600 s');
      expect(message).toContain('access tokens 300 s, ID tokens 3600 s');
      expect(message).toMatch(/resource servers refuse tokens that have not expired yet/);
    }
    const junk = io();
    expect(await runAdmin(['keys', 'rotate', '--retire-after', '1h'], env, junk.io)).toBe(2);
    expect(junk.err.join('\n')).toContain('--retire-after must be a whole number of seconds');
    // Nothing rotated.
    expect((await signingKeys()).map((k) => `${k.status} ${k.jwk.kid}`)).toEqual(before.map((k) => `${k.status} ${k.jwk.kid}`));
  });

  it('keys rotate: the minimum follows the configured access-token TTLs (server-wide and per resource)', async () => {
    const longAccess = withConfig({ accessTokenTTL: 7200 });
    const short = io();
    expect(await runAdmin(['keys', 'rotate', '--retire-after', '3600'], longAccess, short.io)).toBe(2);
    expect(short.err.join('\n')).toContain('at least 7200 s');
    expect(short.err.join('\n')).toContain('access tokens 7200 s, ID tokens 3600 s');

    const perResource = withConfig({
      resources: [
        { resource: 'http://127.0.0.1:3999/mcp', scopes: { 'notes:read': 'Read' } },
        { resource: 'http://127.0.0.1:3998/mcp', scopes: { 'notes:read': 'Read' }, accessTokenTTL: 10_000 },
      ],
    });
    const tooShort = io();
    expect(await runAdmin(['keys', 'rotate', '--retire-after', '9999'], perResource, tooShort.io)).toBe(2);
    expect(tooShort.err.join('\n')).toContain('at least 10000 s');

    const exact = io();
    expect(await runAdmin(['keys', 'rotate', '--retire-after', '10000'], perResource, exact.io), exact.err.join('\n')).toBe(0);
  });

  it('keys rotate: the default (86400 s) stays valid, and is raised to the longest token lifetime when that is longer', async () => {
    const started = Math.floor(Date.now() / 1000);
    const plain = io();
    expect(await runAdmin(['keys', 'rotate'], env, plain.io), plain.err.join('\n')).toBe(0);
    const retired = (await signingKeys()).filter((k) => k.status === 'retired').sort((a, b) => (b.retireAfter ?? 0) - (a.retireAfter ?? 0));
    expect(retired[0]!.retireAfter! - started).toBeGreaterThanOrEqual(86400);
    expect(retired[0]!.retireAfter! - started).toBeLessThan(86400 + 60);

    const veryLong = io();
    expect(await runAdmin(['keys', 'rotate'], withConfig({ accessTokenTTL: 200_000 }), veryLong.io), veryLong.err.join('\n')).toBe(0);
    const newest = (await signingKeys()).filter((k) => k.status === 'retired').sort((a, b) => (b.retireAfter ?? 0) - (a.retireAfter ?? 0));
    expect(newest[0]!.retireAfter! - started).toBeGreaterThanOrEqual(200_000);
  });

  it('keys rotate refuses to guess when the configuration is invalid (exit 1, nothing rotated)', async () => {
    const before = await signingKeys();
    const r = io();
    expect(await runAdmin(['keys', 'rotate', '--retire-after', '90000'], withConfig({ accessTokenTTL: -1 }), r.io)).toBe(1);
    expect(r.err.join('\n')).toMatch(/cannot tell how long issued tokens stay valid.*\n.*accessTokenTTL/);
    expect((await signingKeys()).map((k) => k.jwk.kid)).toEqual(before.map((k) => k.jwk.kid));
  });

  it('opens the store the server would: AS_CONFIG_FILE databaseUrl / databaseSchema when DATABASE_URL is not set; an unreadable file is an error', async () => {
    const file = join(configDir, `${randomBytes(4).toString('hex')}.json`);
    writeFileSync(file, JSON.stringify({ databaseUrl: PG_URL, databaseSchema: schema }));
    const listed = io();
    expect(await runAdmin(['keys', 'list'], { AS_CONFIG_FILE: file }, listed.io), listed.err.join('\n')).toBe(0);
    expect(listed.out.map((l) => l.split('\t')[1])).toEqual((await signingKeys()).map((k) => k.jwk.kid));

    const missing = io();
    expect(await runAdmin(['keys', 'list'], { AS_CONFIG_FILE: join(configDir, 'absent.json') }, missing.io)).toBe(1);
    expect(missing.err.join('\n')).toMatch(/cannot tell which store to open.*\n.*absent\.json/);
  });

  it('cookie-keys rotate: a new key signs, older ones still verify (3 kept), and no key material is printed', async () => {
    const readCookieKeys = async () => {
      const store = await openStore({ kind: 'postgres', url: PG_URL, schema });
      try {
        return await store.keys.cookieKeys();
      } finally {
        await store.close();
      }
    };
    const before = await readCookieKeys();
    expect(before).toHaveLength(1);
    const first = io();
    expect(await runAdmin(['cookie-keys', 'rotate'], env, first.io), first.err.join('\n')).toBe(0);
    expect(first.out.join('\n')).toContain('added a new cookie key; 2 kept: the new one signs, 1 older still verify');
    expect(first.out.join('\n')).toMatch(/restart the authorization server instances/);
    const afterFirst = await readCookieKeys();
    expect(afterFirst).toHaveLength(2);
    expect(afterFirst[1]).toBe(before[0]);

    const outputs = [first];
    for (let i = 0; i < 2; i++) {
      const r = io();
      expect(await runAdmin(['cookie-keys', 'rotate'], env, r.io)).toBe(0);
      outputs.push(r);
    }
    expect(outputs[2]!.out.join('\n')).toContain('3 kept: the new one signs, 2 older still verify, 1 oldest dropped');
    const after = await readCookieKeys();
    expect(after).toHaveLength(3);
    expect(after).not.toContain(before[0]);
    const printed = outputs.flatMap((r) => [...r.out, ...r.err]).join('\n');
    for (const key of [...before, ...after]) expect(printed).not.toContain(key);

    const help = io();
    expect(await runAdmin(['--help'], env, help.io)).toBe(0);
    expect(help.out.join('\n')).toMatch(/^ {2}cookie-keys rotate /m);
  });
});
