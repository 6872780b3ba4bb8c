/**
 * The audit log kept in the store (issue 44): every audit line of the AS also lands in the store,
 * redacted as the log prints it, with its account and client; records older than the retention
 * are purged; a store that fails never fails the request (a warning instead).
 */
import { describe, expect, it } from 'vitest';
import { audit } from '../src/ops/audit.js';
import { createAuditSink } from '../src/ops/audit-sink.js';
import { openStore } from '../src/storage/index.js';
import { recordingLogger } from './helpers/recording-logger.js';

const DAY = 24 * 3600 * 1000;

describe('audit sink', () => {
  it('stores audit lines (account, client, actor columns; secrets redacted), not other lines', async () => {
    const store = await openStore({ kind: 'memory' }, { cleanupIntervalSeconds: 0 });
    const sink = createAuditSink(recordingLogger().logger, store.audit, 90);
    try {
      audit(sink.logger, 'token.issued', {
        client_id: 'c1',
        account_id: 'a1',
        refresh_token: 'rt-secret-value',
        detail: 'Bearer abc.def.ghi',
      });
      audit(sink.logger, 'account.updated', { account: 'a2', actor: 'op-1' });
      sink.logger.info('not an audit line', { client_id: 'c1' });
      await sink.settled();
      const records = await store.audit.search({});
      expect(records.map((r) => [r.event, r.accountId, r.clientId, r.actor])).toEqual([
        ['account.updated', 'a2', undefined, 'op-1'],
        ['token.issued', 'a1', 'c1', undefined],
      ]);
      const text = JSON.stringify(records);
      expect(text).not.toContain('rt-secret-value');
      expect(text).not.toContain('abc.def.ghi');
    } finally {
      sink.stop();
      await store.close();
    }
  });

  it('purges records older than the retention at start (and hourly after)', async () => {
    const store = await openStore({ kind: 'memory' }, { cleanupIntervalSeconds: 0 });
    const now = Date.now();
    await store.audit.append({ at: now - 40 * DAY, event: 'login.succeeded', fields: {} });
    await store.audit.append({ at: now - 10 * DAY, event: 'login.succeeded', fields: {} });
    const sink = createAuditSink(recordingLogger().logger, store.audit, 30);
    try {
      await sink.settled();
      expect((await store.audit.search({})).map((r) => Math.round((now - r.at) / DAY))).toEqual([10]);
    } finally {
      sink.stop();
      await store.close();
    }
  });

  it('a failing store write is a warning, never a thrown error', async () => {
    const store = await openStore({ kind: 'memory' }, { cleanupIntervalSeconds: 0 });
    const { logger, lines } = recordingLogger();
    const sink = createAuditSink(logger, store.audit, 30);
    await store.close();
    audit(sink.logger, 'login.failed', { username: 'x' });
    await sink.settled();
    sink.stop();
    expect(lines.some((l) => l.message === 'audit record not stored')).toBe(true);
  });
});
