import { visibleText } from '@mcp-auth-kit/protocol';
import type { Logger } from '../config/types.js';

/** Minimal structured logger interface used everywhere in the AS (config/types.ts). */
export type { Logger };

export const REDACTED = '[redacted]';

/** Field names whose values are credentials (tokens, codes, secrets, passwords, cookies, keys). */
const SECRET_KEYS =
  /token|secret|password|passwd|code_verifier|^code$|assertion|authorization|cookie|^jwks?$|private_?key|^d$|^dpop$|initial_?access/i;

/**
 * Credentials that may hide inside free text (error details, URLs): JWTs, `Bearer`/`Basic`/
 * `DPoP` credentials, and secret query/form parameters.
 */
const VALUE_PATTERNS: Array<[RegExp, string]> = [
  [/\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*/g, '[redacted-jwt]'],
  [/\b(Bearer|Basic|DPoP)\s+[A-Za-z0-9._~+/=-]{4,}/gi, `$1 ${REDACTED}`],
  [
    /([?&#;\s"']|^)(code|code_verifier|access_token|refresh_token|id_token|client_secret|password|token|registration_access_token|client_assertion)=([^&#\s"';]*)/gi,
    `$1$2=${REDACTED}`,
  ],
];

/**
 * Removes credentials from a free-text value, and shows its controls, invisible and line-breaking
 * characters as visible escapes (protocol's visibleText): a client name, username or URL in a log
 * line is data, never a forged line or an escape sequence for whoever reads the log in a terminal.
 */
export function scrubText(value: string): string {
  let out = value;
  for (const [pattern, replacement] of VALUE_PATTERNS) out = out.replace(pattern, replacement);
  return visibleText(out);
}

function redactValue(key: string, value: unknown, depth: number): unknown {
  if (SECRET_KEYS.test(key)) return value === undefined || value === null ? value : REDACTED;
  if (typeof value === 'string') return scrubText(value);
  if (value instanceof Error) return { name: value.name, message: scrubText(value.message) };
  if (value === null || typeof value !== 'object') return value;
  if (depth >= 6) return '[truncated]';
  if (Array.isArray(value)) return value.map((v) => redactValue('', v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) out[k] = redactValue(k, v, depth + 1);
  return out;
}

/**
 * Replaces values of secret-looking fields (at any depth) and credentials found inside text
 * values, so that nothing sensitive reaches a log line.
 */
export function redact(fields: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (!fields) return fields;
  return redactValue('', fields, 0) as Record<string, unknown>;
}

export function consoleLogger(prefix = 'auth-server'): Logger {
  const write = (level: string) => (message: string, fields?: Record<string, unknown>) => {
    const extra = fields ? ` ${JSON.stringify(redact(fields))}` : '';
    process.stderr.write(`[${prefix}] ${level} ${scrubText(message)}${extra}\n`);
  };
  return { debug() {}, info: write('info'), warn: write('warn'), error: write('error') };
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };
