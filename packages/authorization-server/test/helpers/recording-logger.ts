import type { Logger } from '../../src/ops/logger.js';

export interface LogLine {
  level: 'debug' | 'info' | 'warn' | 'error';
  message: string;
  fields: Record<string, unknown>;
}

/**
 * A Logger that keeps what the authorization server writes, for tests that check what is (and is
 * never) logged. Debug lines are kept only with `{ debug: true }`: without it the server sees a
 * logger that has no debug method, as with a production logger at info level.
 */
export function recordingLogger(options: { debug?: boolean } = {}) {
  const lines: LogLine[] = [];
  const at =
    (level: LogLine['level']) =>
    (message: string, fields: Record<string, unknown> = {}) =>
      void lines.push({ level, message, fields });
  const logger: Logger = { info: at('info'), warn: at('warn'), error: at('error') };
  if (options.debug) logger.debug = at('debug');
  return {
    logger,
    lines,
    /** The lines with this audit event. */
    audits: (event: string) => lines.filter((l) => l.fields.audit === event),
    /** The audit events, in order. */
    events: () => lines.map((l) => l.fields.audit).filter(Boolean),
  };
}
