/**
 * One audit event of an operator's change: written to the store (awaited: a change the console
 * shows as done is in the audit view) and to the process log, both with the operator's `sub`.
 */
import { type AuditEvent, audit } from '../ops/audit.js';
import { redact, type Logger } from '../ops/logger.js';
import type { Store } from '../storage/types.js';
import type { Actor } from './types.js';

export type ChangeRecorder = (
  actor: Actor,
  event: AuditEvent,
  fields: { account_id?: string; client_id?: string } & Record<string, unknown>,
) => Promise<void>;

export function changeRecorder(store: Store, logger: Logger | undefined, clock: () => number = Date.now): ChangeRecorder {
  return async (actor, event, fields) => {
    const all = { ...fields, actor: actor.sub, via: actor.via };
    await store.audit.append({
      at: clock(),
      event,
      actor: actor.sub,
      ...(fields.account_id !== undefined && { accountId: fields.account_id }),
      ...(fields.client_id !== undefined && { clientId: fields.client_id }),
      fields: redact(all) ?? {},
    });
    if (logger) audit(logger, event, all);
  };
}
