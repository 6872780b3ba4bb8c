import type { Logger } from './logger.js';

/**
 * One audit event per security decision. Operators alert on these names, so they are a
 * stable contract: add new names, never rename. Fields go through the logger's redaction.
 */
export type AuditEvent =
  | 'login.succeeded'
  | 'login.failed'
  | 'login.throttled'
  | 'login.upstream'
  | 'consent.granted'
  | 'consent.denied'
  | 'grant.revoked'
  | 'token.issued'
  | 'token.refreshed'
  | 'token.revoked'
  | 'refresh_grace.served'
  | 'client.registered'
  | 'client.updated'
  | 'client.deleted'
  | 'account.created'
  | 'account.updated'
  | 'session.ended'
  | 'id_jag.accepted'
  | 'id_jag.refused'
  | 'client_assertion.accepted'
  | 'client_assertion.refused'
  | 'third_party.connected'
  | 'third_party.disconnected'
  | 'third_party.token_exchanged'
  | 'third_party.refused'
  // the operator console and admin tool (issue 44); `actor` is the operator's sub
  | 'account.disabled'
  | 'cimd.policy_changed'
  | 'cimd.client_approved'
  | 'cimd.client_denied'
  | 'cimd.client_waiting'
  | 'cimd.client_refused'
  | 'keys.rotated';

export function audit(logger: Logger, event: AuditEvent, fields: Record<string, unknown> = {}): void {
  logger.info(`audit ${event}`, { ...fields, audit: event });
}
