/**
 * The CIMD approval queue is bounded (issue 44, fresh-eyes review finding 2): one host can mint
 * client_id URLs without end (MCP Authorization §Client ID Metadata Documents, security
 * considerations), and the queue must stay readable for the operator.
 */
import { describe, expect, it } from 'vitest';
import { createCimdTrust, MAX_PENDING, MAX_PENDING_PER_HOST } from '../src/clients/cimd-trust-gate.js';
import { openStore } from '../src/storage/index.js';

describe('CIMD approval queue bounds', () => {
  it('attack: a flood of client_id URLs from one host queues at most MAX_PENDING_PER_HOST; other hosts still queue', async () => {
    const store = await openStore({ kind: 'memory' }, { cleanupIntervalSeconds: 0 });
    try {
      await store.cimdTrust.setPolicy({ allowedHosts: [], deniedHosts: [], approvalRequired: true });
      const trust = createCimdTrust(store);
      for (let i = 0; i < MAX_PENDING_PER_HOST + 15; i++) await trust.sighted(`https://flood.example/c/${i}.json`);
      const pending = await store.cimdTrust.list('pending');
      expect(pending.filter((r) => r.host === 'flood.example')).toHaveLength(MAX_PENDING_PER_HOST);
      // an unqueued client still waits: it is never admitted for being over the bound
      expect(await trust.verdict(`https://flood.example/c/${MAX_PENDING_PER_HOST + 10}.json`)).toBe('pending');
      expect(await trust.sighted('https://honest.example/client.json')).toBe(true);
      expect((await store.cimdTrust.get('https://honest.example/client.json'))?.status).toBe('pending');
    } finally {
      await store.close();
    }
  });

  it('attack: many hosts together queue at most MAX_PENDING clients', async () => {
    const store = await openStore({ kind: 'memory' }, { cleanupIntervalSeconds: 0 });
    try {
      const trust = createCimdTrust(store);
      for (let i = 0; i < MAX_PENDING + 5; i++) await trust.sighted(`https://h${i}.example/c.json`);
      expect(await store.cimdTrust.list('pending')).toHaveLength(MAX_PENDING);
    } finally {
      await store.close();
    }
  });
});
