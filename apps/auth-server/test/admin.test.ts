import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore, verifyPassword } from '@mcp-auth-kit/authorization-server';
import { runAdmin, type AdminIo } from '../src/admin.js';

const PG_URL = process.env.TEST_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test';
const schema = `as_admin_${randomBytes(4).toString('hex')}`;
const env = { DATABASE_URL: PG_URL, DATABASE_SCHEMA: schema };

function io(password = '') {
  const out: string[] = [];
  const err: string[] = [];
  const value: AdminIo = { out: (l) => out.push(l), err: (l) => err.push(l), readPassword: async () => password };
  return { io: value, out, err };
}

describe('mcp-auth-server-admin', () => {
  afterAll(async () => {
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await client.end();
  });

  it('user add / set-password / disable / list work on the shared store; passwords never printed', async () => {
    const add = io('first-password');
    expect(await runAdmin(['user', 'add', 'carol', '--display-name', 'Carol'], env, add.io)).toBe(0);
    expect(add.out.join('\n')).toMatch(/created user carol/);
    const dup = io('first-password');
    expect(await runAdmin(['user', 'add', 'carol'], env, dup.io)).toBe(2);
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

  it('refuses short passwords and unknown commands with usage (exit 2)', async () => {
    const short = io('short');
    expect(await runAdmin(['user', 'add', 'dave'], env, short.io)).toBe(2);
    expect(short.err.join('\n')).toMatch(/at least 8/);
    const unknown = io();
    expect(await runAdmin(['frobnicate'], env, unknown.io)).toBe(2);
    expect(unknown.err.join('\n')).toMatch(/usage/);
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
});
