/**
 * The admin tool's console commands (issue 44), on the store directly (no server running): the
 * first admin, the CIMD approval queue, the client list; each change lands in the audit log with
 * the tool as its operator.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '@mcp-auth-kit/authorization-server';
import { type AdminIo, CLI_ACTOR, runAdmin } from '../src/admin.js';

const dir = mkdtempSync(join(tmpdir(), 'as-admin-console-'));
const file = join(dir, `as-${randomBytes(4).toString('hex')}.sqlite`);
const env = { DATABASE_URL: `sqlite:${file}` };

function io(password = '') {
  const out: string[] = [];
  const err: string[] = [];
  const value: AdminIo = { out: (l) => out.push(l), err: (l) => err.push(l), readPassword: async () => password };
  return { io: value, out, err };
}

async function withStore<T>(fn: (store: Awaited<ReturnType<typeof openStore>>) => Promise<T>): Promise<T> {
  const store = await openStore({ kind: 'sqlite', file }, { cleanupIntervalSeconds: 0 });
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

describe('admin tool: console commands', () => {
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('user grant-admin makes the first admin (user list shows it), revoke-admin takes it back; both audited', async () => {
    expect(await runAdmin(['user', 'add', 'root'], env, io('root-password').io)).toBe(0);
    const grant = io();
    expect(await runAdmin(['user', 'grant-admin', 'root'], env, grant.io)).toBe(0);
    expect(grant.out.join('\n')).toMatch(/root is an admin/);
    const list = io();
    expect(await runAdmin(['user', 'list'], env, list.io)).toBe(0);
    expect(list.out.join('\n')).toMatch(/root\t.*\tactive\+admin/);
    expect(await withStore(async (s) => (await s.accounts.findByUsername('root'))?.admin)).toBe(true);
    expect(await runAdmin(['user', 'revoke-admin', 'root'], env, io().io)).toBe(0);
    expect(await withStore(async (s) => (await s.accounts.findByUsername('root'))?.admin)).toBe(false);
    const events = await withStore((s) => s.audit.search({ actor: CLI_ACTOR.sub, event: 'account.updated' }));
    expect(events.map((e) => e.fields.admin)).toEqual([false, true]);
    expect(await runAdmin(['user', 'grant-admin', 'nobody'], env, io().io)).toBe(1);
  });

  it('cimd approve / deny / list work on the queue by client_id URL; a non-URL is refused (exit 2)', async () => {
    const approve = io();
    expect(await runAdmin(['cimd', 'approve', 'https://apps.example/client.json'], env, approve.io)).toBe(0);
    expect(approve.out).toEqual(['https://apps.example/client.json approved']);
    expect(await runAdmin(['cimd', 'deny', 'https://bad.example/c.json'], env, io().io)).toBe(0);
    const list = io();
    expect(await runAdmin(['cimd', 'list', 'approved'], env, list.io)).toBe(0);
    expect(list.out).toHaveLength(1);
    expect(list.out[0]).toMatch(/^approved\thttps:\/\/apps\.example\/client\.json\tapps\.example\t/);
    const bad = io();
    expect(await runAdmin(['cimd', 'approve', 'not-a-url'], env, bad.io)).toBe(2);
    expect(await runAdmin(['cimd', 'list', 'maybe'], env, io().io)).toBe(2);
    const clients = io();
    expect(await runAdmin(['clients', 'list'], env, clients.io)).toBe(0);
    expect(clients.out.join('\n')).toMatch(/^cimd\thttps:\/\/bad\.example\/c\.json\tactive,denied/m);
    const decided = await withStore((s) => s.audit.search({ actor: CLI_ACTOR.sub }));
    expect(decided.map((e) => e.event)).toEqual(expect.arrayContaining(['cimd.client_approved', 'cimd.client_denied']));
  });
});

describe('console environment names (app)', () => {
  it('CONSOLE_PATH, CONSOLE_FIRST_ADMIN and AUDIT_RETENTION_DAYS set console.* and audit.*; bad values are problems', async () => {
    const { loadConfig } = await import('../src/config.js');
    const { config, problems } = loadConfig({ CONSOLE_PATH: '/console', CONSOLE_FIRST_ADMIN: 'root', AUDIT_RETENTION_DAYS: '30' });
    expect(problems).toEqual([]);
    expect(config.authorizationServer?.console).toEqual({ path: '/console', firstAdmin: 'root' });
    expect(config.authorizationServer?.audit).toEqual({ retentionDays: 30 });
    expect(loadConfig({ CONSOLE_FIRST_ADMIN: 'root' }).problems).toContain(
      'CONSOLE_FIRST_ADMIN needs CONSOLE_PATH (the console is off without it)',
    );
    expect(loadConfig({ AUDIT_RETENTION_DAYS: 'forever' }).problems).toContain(
      'AUDIT_RETENTION_DAYS must be a positive whole number of days',
    );
    expect(loadConfig({ CONSOLE_PATH: 'console/' }).problems.join('\n')).toMatch(/console\.path/);
  });
});
