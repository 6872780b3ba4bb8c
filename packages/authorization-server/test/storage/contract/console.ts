/**
 * The contract of the operator console's store parts (issue 44): the admin role on accounts, the
 * audit log (search by account, client, event, operator and time, newest first, pages, purge), the
 * CIMD trust policy and the approval queue, and the listing of one model's live rows.
 */
import { describe, expect, it } from 'vitest';
import type { NewAuditRecord } from '../../../src/storage/index.js';
import type { Opened } from '../contract.js';

export function consoleContract(opened: Opened): void {
  describe('operator console: admin role', () => {
    it('an account is not an admin by default; update grants and takes back the role; every lookup says so', async () => {
      const { accounts } = opened.store;
      const created = await accounts.create({ id: 'a1', username: 'alice', passwordHash: null, disabled: false });
      expect(created.admin).toBe(false);
      expect((await accounts.findById('a1'))?.admin).toBe(false);
      await accounts.update('a1', { admin: true });
      expect((await accounts.findById('a1'))?.admin).toBe(true);
      expect((await accounts.findByUsername('alice'))?.admin).toBe(true);
      expect((await accounts.list())[0]?.admin).toBe(true);
      // a patch without the member leaves the role as it is
      await accounts.update('a1', { displayName: 'Alice' });
      expect((await accounts.findById('a1'))?.admin).toBe(true);
      await accounts.update('a1', { admin: false });
      expect((await accounts.findById('a1'))?.admin).toBe(false);
      const second = await accounts.create({ id: 'a2', username: 'root', passwordHash: null, disabled: false, admin: true });
      expect(second.admin).toBe(true);
      expect((await accounts.findById('a2'))?.admin).toBe(true);
    });
  });

  describe('operator console: audit log', () => {
    const event = (at: number, extra: Partial<NewAuditRecord> = {}): NewAuditRecord => ({
      at,
      event: 'login.succeeded',
      fields: {},
      ...extra,
    });

    it('append gives increasing ids and every member back; optional members stay absent', async () => {
      const { audit } = opened.store;
      const t = opened.clock.ms;
      const first = await audit.append(event(t, { accountId: 'a1', clientId: 'c1', actor: 'op', fields: { ip: '127.0.0.1', n: 2 } }));
      const second = await audit.append(event(t + 1));
      expect(Number(second.id)).toBeGreaterThan(Number(first.id));
      expect(first).toEqual({
        id: first.id,
        at: t,
        event: 'login.succeeded',
        accountId: 'a1',
        clientId: 'c1',
        actor: 'op',
        fields: { ip: '127.0.0.1', n: 2 },
      });
      const [newest, oldest] = await audit.search({});
      expect(newest).toEqual(second);
      expect(oldest).toEqual(first);
      expect('actor' in newest! || 'accountId' in newest! || 'clientId' in newest!).toBe(false);
    });

    it('appendMany writes a batch in order (the audit sink writes one statement per batch); an invalid record refuses the whole batch', async () => {
      const { audit } = opened.store;
      const t = opened.clock.ms;
      expect(await audit.appendMany([])).toBe(0);
      expect(await audit.appendMany([event(t, { accountId: 'b1' }), event(t + 1, { event: 'token.issued', clientId: 'c9' })])).toBe(2);
      const [newest, oldest] = await audit.search({});
      expect(newest).toMatchObject({ at: t + 1, event: 'token.issued', clientId: 'c9' });
      expect(oldest).toMatchObject({ at: t, accountId: 'b1' });
      await expect(audit.appendMany([event(t + 2), { at: t + 3, event: '', fields: {} }])).rejects.toMatchObject({ code: 'invalid_input' });
      expect(await audit.search({})).toHaveLength(2);
    });

    it('search narrows by account, client, event, operator and time range (from inclusive, to exclusive), newest first', async () => {
      const { audit } = opened.store;
      const t = opened.clock.ms;
      await audit.append(event(t, { accountId: 'a1', clientId: 'c1' }));
      await audit.append(event(t + 10, { accountId: 'a2', clientId: 'c1', event: 'grant.revoked', actor: 'op' }));
      await audit.append(event(t + 20, { accountId: 'a1', clientId: 'c2', event: 'token.issued' }));
      const times = async (q: Parameters<typeof audit.search>[0]) => (await audit.search(q)).map((r) => r.at - t);
      expect(await times({})).toEqual([20, 10, 0]);
      expect(await times({ accountId: 'a1' })).toEqual([20, 0]);
      expect(await times({ clientId: 'c1' })).toEqual([10, 0]);
      expect(await times({ event: 'grant.revoked' })).toEqual([10]);
      expect(await times({ actor: 'op' })).toEqual([10]);
      expect(await times({ from: t + 10 })).toEqual([20, 10]);
      expect(await times({ to: t + 10 })).toEqual([0]);
      expect(await times({ from: t + 5, to: t + 20, accountId: 'a2' })).toEqual([10]);
      expect(await times({ accountId: 'nobody' })).toEqual([]);
    });

    it('pages: limit, then before the last id seen; a bad limit or cursor is refused (invalid_input)', async () => {
      const { audit } = opened.store;
      for (let i = 0; i < 5; i++) await audit.append(event(opened.clock.ms + i));
      const page1 = await audit.search({ limit: 2 });
      const page2 = await audit.search({ limit: 2, before: page1[1]!.id });
      const page3 = await audit.search({ limit: 2, before: page2[1]!.id });
      expect([...page1, ...page2, ...page3].map((r) => r.at - opened.clock.ms)).toEqual([4, 3, 2, 1, 0]);
      await expect(audit.search({ limit: 0 })).rejects.toMatchObject({ code: 'invalid_input' });
      await expect(audit.search({ before: "1' OR 1=1" })).rejects.toMatchObject({ code: 'invalid_input' });
    });

    it('purge deletes records older than the given time and returns how many (retention)', async () => {
      const { audit } = opened.store;
      const t = opened.clock.ms;
      await audit.append(event(t - 2000));
      await audit.append(event(t - 1000));
      await audit.append(event(t));
      expect(await audit.purge(t - 500)).toBe(2);
      expect((await audit.search({})).map((r) => r.at)).toEqual([t]);
      expect(await audit.purge(t - 500)).toBe(0);
    });

    it('a record without an event name or with fields that are not an object is refused (invalid_input)', async () => {
      const { audit } = opened.store;
      await expect(audit.append({ at: opened.clock.ms, event: '', fields: {} })).rejects.toMatchObject({ code: 'invalid_input' });
      await expect(
        audit.append({ at: opened.clock.ms, event: 'x', fields: [] as unknown as Record<string, unknown> }),
      ).rejects.toMatchObject({
        code: 'invalid_input',
      });
      expect(await audit.search({})).toEqual([]);
    });

    it('a search value with U+0000 finds nothing (never a driver error)', async () => {
      await opened.store.audit.append(event(opened.clock.ms, { accountId: 'a1' }));
      expect(await opened.store.audit.search({ accountId: 'a1\u0000' })).toEqual([]);
    });
  });

  describe('operator console: CIMD trust policy and approval queue', () => {
    const url = (host: string, path = '/client.json') => `https://${host}${path}`;

    it('the default policy allows and denies nothing and asks no approval; setPolicy stores it (hosts lower-cased, once each)', async () => {
      const trust = opened.store.cimdTrust;
      expect(await trust.policy()).toEqual({ allowedHosts: [], deniedHosts: [], approvalRequired: false });
      const set = await trust.setPolicy({
        allowedHosts: ['Apps.Example.com', '*.trusted.example', 'apps.example.com'],
        deniedHosts: ['evil.example'],
        approvalRequired: true,
        updatedBy: 'op-1',
      });
      expect(set).toEqual({
        allowedHosts: ['apps.example.com', '*.trusted.example'],
        deniedHosts: ['evil.example'],
        approvalRequired: true,
        updatedAt: opened.clock.seconds,
        updatedBy: 'op-1',
      });
      expect(await trust.policy()).toEqual(set);
      await expect(trust.setPolicy({ allowedHosts: ['bad host/'], deniedHosts: [], approvalRequired: true })).rejects.toMatchObject({
        code: 'invalid_input',
      });
      expect(await trust.policy()).toEqual(set);
    });

    it('see records a new client with its host and status once; seen again it keeps status and first-seen time', async () => {
      const trust = opened.store.cimdTrust;
      const first = await trust.see(url('a.example'), 'a.example', 'pending');
      expect(first).toEqual({
        clientId: url('a.example'),
        host: 'a.example',
        status: 'pending',
        firstSeen: opened.clock.seconds,
        lastSeen: opened.clock.seconds,
      });
      opened.clock.advance(60);
      const again = await trust.see(url('a.example'), 'a.example', 'approved');
      expect(again).toEqual({ ...first, lastSeen: opened.clock.seconds });
      expect(await trust.get(url('a.example'))).toEqual(again);
      expect(await trust.get(url('b.example'))).toBeUndefined();
    });

    it('decide sets the operator, time and status (also for a client not seen yet); list filters by status, newest first', async () => {
      const trust = opened.store.cimdTrust;
      await trust.see(url('a.example'), 'a.example', 'pending');
      opened.clock.advance(10);
      await trust.see(url('b.example'), 'b.example', 'pending');
      opened.clock.advance(10);
      const approved = await trust.decide(url('a.example'), 'a.example', 'approved', 'op-1');
      expect(approved).toMatchObject({
        status: 'approved',
        decidedAt: opened.clock.seconds,
        decidedBy: 'op-1',
        firstSeen: opened.clock.seconds - 20,
      });
      const denied = await trust.decide(url('c.example'), 'c.example', 'denied', 'op-2');
      expect(denied).toMatchObject({ status: 'denied', firstSeen: opened.clock.seconds, decidedBy: 'op-2' });
      expect((await trust.list()).map((c) => c.host)).toEqual(['c.example', 'b.example', 'a.example']);
      expect((await trust.list('pending')).map((c) => c.host)).toEqual(['b.example']);
      expect((await trust.list('approved')).map((c) => c.host)).toEqual(['a.example']);
      // a later sighting never undoes the operator's decision
      expect((await trust.see(url('c.example'), 'c.example', 'approved')).status).toBe('denied');
      await expect(trust.decide(url('a.example'), 'a.example', 'maybe' as 'approved', 'op')).rejects.toMatchObject({
        code: 'invalid_input',
      });
      await expect(trust.decide(url('a.example'), 'a.example', 'approved', '')).rejects.toMatchObject({ code: 'invalid_input' });
    });

    it('delete forgets a client (true once); lookups with U+0000 find nothing', async () => {
      const trust = opened.store.cimdTrust;
      await trust.see(url('a.example'), 'a.example', 'pending');
      expect(await trust.delete(url('a.example'))).toBe(true);
      expect(await trust.delete(url('a.example'))).toBe(false);
      expect(await trust.get(url('a.example'))).toBeUndefined();
      expect(await trust.get(`${url('a.example')}\u0000`)).toBeUndefined();
    });
  });

  describe('operator console: listing a model', () => {
    it('listModels gives every live row of one model by id, never other models or expired rows', async () => {
      const clients = opened.store.adapter('Client');
      await clients.upsert('c-b', { client_id: 'c-b', client_name: 'B' } as never, undefined as never);
      await clients.upsert('c-a', { client_id: 'c-a' } as never, undefined as never);
      await opened.store.adapter('Session').upsert('s1', { accountId: 'x' } as never, 60);
      await opened.store.adapter('Client').upsert('c-short', { client_id: 'c-short' } as never, 10);
      expect((await opened.store.listModels('Client')).map((r) => r.id)).toEqual(['c-a', 'c-b', 'c-short']);
      opened.clock.advance(11);
      const rows = await opened.store.listModels('Client');
      expect(rows).toEqual([
        { id: 'c-a', payload: { client_id: 'c-a' } },
        { id: 'c-b', payload: { client_id: 'c-b', client_name: 'B' } },
      ]);
    });
  });
}
