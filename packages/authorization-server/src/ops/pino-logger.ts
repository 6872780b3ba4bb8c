/** JSON-lines logger on pino, implementing the kit's `Logger` (redaction included). */
import { DEFAULTS } from '../config/defaults.js';
import { pino, type DestinationStream, type Level, type Logger as Pino } from 'pino';
import { redact, scrubText, REDACTED, type Logger } from './logger.js';

export interface PinoLoggerOptions {
  /** Minimum level (default `info`). */
  level?: Level | 'silent';
  /** Where lines go (default: stderr, written synchronously so nothing is lost on exit). */
  destination?: DestinationStream;
  /** `name` field of every line (default `mcp-auth-kit`). */
  name?: string;
}

/**
 * Secrets are removed twice: `redact()` (secret-looking keys at any depth, credentials inside
 * text) before pino sees the fields, and pino's own path redaction as a second net for the
 * well-known places (headers, bodies) should a caller hand raw objects over.
 */
const PINO_REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  '*.authorization',
  '*.cookie',
  '*.password',
  '*.client_secret',
  '*.access_token',
  '*.refresh_token',
  '*.code',
  '*.code_verifier',
];

export function pinoLogger(options: PinoLoggerOptions = {}): Logger & { pino: Pino } {
  const destination = options.destination ?? pino.destination({ dest: 2, sync: true });
  const p = pino(
    {
      name: options.name ?? DEFAULTS.pinoLogger.name,
      level: options.level ?? DEFAULTS.pinoLogger.level,
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: PINO_REDACT_PATHS, censor: REDACTED },
    },
    destination,
  );
  const write = (level: 'debug' | 'info' | 'warn' | 'error') => (message: string, fields?: Record<string, unknown>) => {
    if (!p.isLevelEnabled(level)) return;
    p[level](redact(fields) ?? {}, scrubText(message));
  };
  return { pino: p, debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error') };
}
