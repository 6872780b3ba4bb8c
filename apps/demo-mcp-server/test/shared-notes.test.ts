// The demo's notes in Redis (REDIS_URL): two replicas see the same notes; subjects stay apart.
import { randomBytes } from 'node:crypto';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisNotesStore, startDemoServer } from '../src/index.js';
import { freePort, isListening, shouldRunRedisTests, TEST_REDIS_URL } from '@mcp-auth-kit/test-utils';

const REDIS_URL = TEST_REDIS_URL;

describe.runIf(await shouldRunRedisTests())('RedisNotesStore (real Redis)', () => {
  const prefix = `test-notes-${randomBytes(6).toString('hex')}:`;
  const client = createClient({ url: REDIS_URL });
  client.on('error', () => {});
  beforeAll(async () => {
    await client.connect();
  });
  afterAll(async () => {
    for await (const keys of client.scanIterator({ MATCH: `${prefix}*`, COUNT: 1000 })) if (keys.length) await client.del(keys);
    client.destroy();
  });

  it('a note added through one replica is listed by another, in order, with unique ids', async () => {
    const replicaA = new RedisNotesStore({ client, prefix, now: () => new Date('2026-01-01T00:00:00Z') });
    const replicaB = new RedisNotesStore({ client, prefix });
    const first = await replicaA.add('alice', 'one');
    const second = await replicaB.add('alice', 'two');
    expect(first).toEqual({ id: 'note-1', text: 'one', createdAt: '2026-01-01T00:00:00.000Z' });
    expect(second.id).toBe('note-2');
    expect((await replicaB.list('alice')).map((n) => n.text)).toEqual(['one', 'two']);
    expect(await replicaA.list('bob')).toEqual([]);
  });

  it('subjects never share a list, whatever characters they hold; the oldest notes go beyond the bound', async () => {
    const store = new RedisNotesStore({ client, prefix, maxNotesPerSubject: 2 });
    await store.add('client:x*', 'a');
    await store.add('client:x', 'b');
    expect((await store.list('client:x*')).map((n) => n.text)).toEqual(['a']);
    for (const text of ['c', 'd']) await store.add('client:x', text);
    expect((await store.list('client:x')).map((n) => n.text)).toEqual(['c', 'd']);
  });
});

describe('REDIS_URL that never answers', () => {
  it('fails the start with the connection error (no hang) and releases the port', async () => {
    const deadPort = await freePort(); // nothing listens there
    const port = await freePort();
    await expect(
      startDemoServer({
        port,
        host: '127.0.0.1',
        issuer: 'http://127.0.0.1:9',
        redisUrl: `redis://127.0.0.1:${deadPort}`,
        onError: () => {},
      }),
    ).rejects.toThrow(/ECONNREFUSED/);
    expect(await isListening(port)).toBe(false);
  });
});
