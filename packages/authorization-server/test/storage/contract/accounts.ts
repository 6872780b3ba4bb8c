/** The contract of the account store: lookups by canonical name and upstream identity, uniqueness, names refused, source. */
import { describe, expect, it } from 'vitest';
import { StorageError } from '../../../src/storage/index.js';
import type { Store } from '../../../src/storage/index.js';
import type { Opened } from '../contract.js';

export function accountsContract(opened: Opened): void {
  describe('accounts', () => {
    const base = { passwordHash: 'scrypt$x', disabled: false };

    it('create, findById, findByUsername (case-insensitive), list', async () => {
      const created = await opened.store.accounts.create({ id: 'a1', username: 'Alice', ...base, displayName: 'Alice A.' });
      expect(created).toMatchObject({
        id: 'a1',
        username: 'Alice',
        displayName: 'Alice A.',
        createdAt: opened.clock.seconds,
        updatedAt: opened.clock.seconds,
      });
      expect(await opened.store.accounts.findById('a1')).toEqual(created);
      expect((await opened.store.accounts.findByUsername('alice'))?.id).toBe('a1');
      expect((await opened.store.accounts.findByUsername('ALICE'))?.id).toBe('a1');
      expect(await opened.store.accounts.findByUsername('bob')).toBeUndefined();
      expect(await opened.store.accounts.findById('nope')).toBeUndefined();
      await opened.store.accounts.create({ id: 'a2', username: 'bob', passwordHash: null, disabled: true });
      expect((await opened.store.accounts.list()).map((a) => a.id)).toEqual(['a1', 'a2']);
    });

    it('usernames are unique case-insensitively (a second "ALICE" is refused)', async () => {
      await opened.store.accounts.create({ id: 'a1', username: 'alice', ...base });
      await expect(opened.store.accounts.create({ id: 'a2', username: 'ALICE', ...base })).rejects.toMatchObject({ code: 'conflict' });
      await expect(opened.store.accounts.create({ id: 'a1', username: 'other', ...base })).rejects.toBeInstanceOf(StorageError);
      expect(await opened.store.accounts.list()).toHaveLength(1);
    });

    it('lookup by upstream identity; an identity belongs to one account only', async () => {
      await opened.store.accounts.create({ id: 'a1', username: 'alice', ...base, upstreamIdentities: ['https://idp.example alice-sub'] });
      expect((await opened.store.accounts.findByUpstreamIdentity('https://idp.example', 'alice-sub'))?.id).toBe('a1');
      expect(await opened.store.accounts.findByUpstreamIdentity('https://idp.example', 'other')).toBeUndefined();
      expect(await opened.store.accounts.findByUpstreamIdentity('https://evil.example', 'alice-sub')).toBeUndefined();
      await expect(
        opened.store.accounts.create({ id: 'a2', username: 'mallory', ...base, upstreamIdentities: ['https://idp.example alice-sub'] }),
      ).rejects.toMatchObject({ code: 'conflict' });
    });

    it('update patches fields, keeps createdAt, refreshes updatedAt, re-indexes username and identities', async () => {
      await opened.store.accounts.create({ id: 'a1', username: 'alice', ...base });
      await opened.store.accounts.create({ id: 'a2', username: 'bob', ...base });
      opened.clock.advance(30);
      const updated = await opened.store.accounts.update('a1', { username: 'Alicia', disabled: true, upstreamIdentities: ['iss sub'] });
      expect(updated).toMatchObject({
        id: 'a1',
        username: 'Alicia',
        disabled: true,
        passwordHash: 'scrypt$x',
        createdAt: opened.clock.seconds - 30,
        updatedAt: opened.clock.seconds,
      });
      expect(await opened.store.accounts.findByUsername('alice')).toBeUndefined();
      expect((await opened.store.accounts.findByUsername('ALICIA'))?.id).toBe('a1');
      expect((await opened.store.accounts.findByUpstreamIdentity('iss', 'sub'))?.id).toBe('a1');
      await expect(opened.store.accounts.update('a2', { username: 'alicia' })).rejects.toMatchObject({ code: 'conflict' });
      await expect(opened.store.accounts.update('missing', { disabled: true })).rejects.toMatchObject({ code: 'not_found' });
      expect((await opened.store.accounts.findById('a2'))?.username).toBe('bob');
    });

    // One canonical identity (identityKey of @mcp-auth-kit/protocol: UTS #15 NFKC, then lower case).
    it('lookup and uniqueness use the canonical key: lookalikes find the account and cannot be a second one', async () => {
      await opened.store.accounts.create({ id: 'a1', username: 'bob', ...base });
      for (const spelling of ['bob', 'BOB', '𝖇𝖔𝖇', 'ｂｏｂ', '𝐁𝐨𝐛']) {
        expect((await opened.store.accounts.findByUsername(spelling))?.id, spelling).toBe('a1');
      }
      await opened.store.accounts.create({ id: 'a2', username: 'lee@acme.example', ...base });
      expect((await opened.store.accounts.findByUsername('ｌｅｅ@ａｃｍｅ.example'))?.id).toBe('a2');
      await expect(opened.store.accounts.create({ id: 'a3', username: 'Bob', ...base })).rejects.toMatchObject({ code: 'conflict' });
      expect(await opened.store.accounts.list()).toHaveLength(2);
    });

    it('a name not in canonical display-safe form is refused at creation and rename (invalid_input)', async () => {
      const refused = [
        '𝖇𝖔𝖇',
        'ｌｅｅ@ａｃｍｅ.example',
        'alice\u200b',
        'ali\tce',
        'alice\nadmin',
        ' alice',
        'a'.repeat(100 * 1024),
        'pаypal',
      ];
      for (const [i, username] of refused.entries()) {
        await expect(
          opened.store.accounts.create({ id: `bad-${i}`, username, ...base }),
          JSON.stringify(username.slice(0, 20)),
        ).rejects.toMatchObject({
          code: 'invalid_input',
        });
      }
      await opened.store.accounts.create({ id: 'a1', username: 'alice', ...base });
      await expect(opened.store.accounts.update('a1', { username: 'alice\u200b' })).rejects.toMatchObject({ code: 'invalid_input' });
      expect((await opened.store.accounts.list()).map((a) => a.username)).toEqual(['alice']);
    });

    it('the source is stored, returned by every lookup, defaults to operator, and update only ever makes it operator (adoption)', async () => {
      const upstream = 'upstream:https://idp.example';
      await opened.store.accounts.create({ id: 'a1', username: 'alice', ...base });
      await opened.store.accounts.create({
        id: 'a2',
        username: 'bob',
        ...base,
        upstreamIdentities: ['https://idp.example bob'],
        source: upstream,
      });
      await opened.store.accounts.create({ id: 'a3', username: 'carol', ...base, source: 'id-jag:https://jag.example' });
      expect((await opened.store.accounts.findById('a1'))?.source).toBe('operator');
      expect((await opened.store.accounts.findByUsername('BOB'))?.source).toBe(upstream);
      expect((await opened.store.accounts.findByUpstreamIdentity('https://idp.example', 'bob'))?.source).toBe(upstream);
      expect((await opened.store.accounts.list()).map((a) => a.source)).toEqual(['operator', upstream, 'id-jag:https://jag.example']);
      // Only `operator` (the admin tool's `set-password --adopt`); any other value is refused, nothing changed.
      const toJag = { disabled: true, source: 'id-jag:https://jag.example' } as unknown as Parameters<Store['accounts']['update']>[1];
      await expect(opened.store.accounts.update('a2', toJag)).rejects.toMatchObject({ code: 'invalid_input' });
      expect(await opened.store.accounts.findById('a2')).toMatchObject({ source: upstream, disabled: false });
      expect((await opened.store.accounts.update('a2', { disabled: true })).source).toBe(upstream);
      expect((await opened.store.accounts.update('a2', { source: 'operator' })).source).toBe('operator');
      expect((await opened.store.accounts.findById('a2'))?.source).toBe('operator');
      // The public demo account is marked as such (never signs in on a production server).
      await opened.store.accounts.create({ id: 'a5', username: 'demo', ...base, source: 'demo' });
      expect((await opened.store.accounts.findByUsername('demo'))?.source).toBe('demo');
      await expect(
        opened.store.accounts.create({ id: 'a4', username: 'dave', ...base, source: 'someone' as 'operator' }),
      ).rejects.toMatchObject({
        code: 'invalid_input',
      });
    });
  });
}
