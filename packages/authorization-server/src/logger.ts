/** Minimal structured logger interface; the default writes one line per event to stderr. */
export interface Logger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

const SECRET_KEYS = /token|secret|password|code_verifier|^code$|assertion|authorization|cookie/i;

/** Replaces values of secret-looking fields so that nothing sensitive reaches a log line. */
export function redact(fields: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (!fields) return fields;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) {
    out[key] = SECRET_KEYS.test(key) ? '[redacted]' : value;
  }
  return out;
}

export function consoleLogger(prefix = 'auth-server'): Logger {
  const write = (level: string) => (message: string, fields?: Record<string, unknown>) => {
    const extra = fields ? ` ${JSON.stringify(redact(fields))}` : '';
    process.stderr.write(`[${prefix}] ${level} ${message}${extra}\n`);
  };
  return { info: write('info'), warn: write('warn'), error: write('error') };
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {} };
