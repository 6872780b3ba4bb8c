/**
 * The audit log kept in the store (issue 44): every `audit` event the AS writes to its log also
 * becomes a record in the store's audit log, so the console can search it by account, client,
 * event and time. Fields are stored as the log prints them (redacted: no secret); a failed write
 * is logged as a warning and never fails the request that caused the event.
 */
import { redact, scrubText, type Logger } from './logger.js';
import type { AuditStore, NewAuditRecord } from '../storage/types.js';

const DAY_MS = 24 * 3600 * 1000;
const PURGE_INTERVAL_MS = 3600 * 1000;
/**
 * Records are written in batches, off the request that caused them: the events of one turn of
 * the event loop (up to BATCH_MAX) go in one statement, so a busy AS writes one INSERT per batch,
 * not one per event, and a quiet one still has each record stored at once (the console reads it).
 */
const BATCH_MAX = 100;

const text = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? scrubText(v) : undefined);

export interface AuditSink {
  logger: Logger;
  /** The wrapped logger: the process log only (for writers that store their own audit records). */
  logOnly: Logger;
  /** Resolves when every write started so far has ended. */
  settled(): Promise<void>;
  /** Stops the retention purge. */
  stop(): void;
}

/** Wraps `logger`: its `info` lines that carry an `audit` event are written to `audit` as well. */
export function createAuditSink(logger: Logger, audit: AuditStore, retentionDays: number, clock: () => number = Date.now): AuditSink {
  const pending = new Set<Promise<unknown>>();
  const track = (p: Promise<unknown>) => {
    pending.add(p);
    void p.finally(() => pending.delete(p));
  };
  const write = (fields: Record<string, unknown>) => {
    const { audit: event, ...rest } = fields;
    const accountId = text(rest.account_id) ?? text(rest.account) ?? text(rest.sub);
    const clientId = text(rest.client_id);
    const actor = text(rest.actor);
    const record = {
      at: clock(),
      event: String(event),
      ...(actor !== undefined && { actor }),
      ...(accountId !== undefined && { accountId }),
      ...(clientId !== undefined && { clientId }),
      fields: redact(rest) ?? {},
    };
    queue.push(record);
    if (queue.length >= BATCH_MAX) flush();
    else if (!timer) timer = setImmediate(flush);
  };
  let queue: NewAuditRecord[] = [];
  let timer: NodeJS.Immediate | undefined;
  const flush = () => {
    if (timer) clearImmediate(timer);
    timer = undefined;
    if (queue.length === 0) return;
    const batch = queue;
    queue = [];
    track(
      audit
        .appendMany(batch)
        .catch((error: unknown) => logger.warn('audit record not stored', { events: batch.map((r) => r.event).join(' '), error })),
    );
  };
  const purge = () =>
    track(audit.purge(clock() - retentionDays * DAY_MS).catch((error: unknown) => logger.warn('audit retention purge failed', { error })));
  purge();
  const purgeTimer = setInterval(purge, PURGE_INTERVAL_MS);
  // the purge must never keep a process alive on its own
  purgeTimer.unref();
  return {
    logOnly: logger,
    logger: {
      debug: (m, f) => logger.debug?.(m, f),
      info(message, fields) {
        logger.info(message, fields);
        if (fields && typeof fields.audit === 'string') write(fields);
      },
      warn: (m, f) => logger.warn(m, f),
      error: (m, f) => logger.error(m, f),
    },
    async settled() {
      flush();
      while (pending.size) await Promise.allSettled([...pending]);
    },
    stop: () => {
      clearInterval(purgeTimer);
      flush();
    },
  };
}
