import { describe, expect, it, vi } from 'vitest';
import { consoleLogger } from '../src/ops/logger.js';
import { pinoLogger } from '../src/ops/pino-logger.js';

/**
 * Issue 46: what a client or user sends (a client name, a username, a redirect URI) is data in
 * the AS's logs too, never layout: a log read in a terminal (`tail`, `less -R`, pino-pretty) must
 * not receive escape sequences, and a console log line must not be split into forged lines.
 * Controls, invisible characters and line separators are written as visible escapes (protocol's visibleText).
 */
const HOSTILE = 'alice\n[auth-server] info login.succeeded {"username":"root"}\u001b]52;c;Y3VybA==\u0007\u009b2J\u200b\u2028';
const SHOWN = 'alice\\n[auth-server] info login.succeeded {"username":"root"}\\u001b]52;c;Y3VybA==\\u0007\\u009b2J\\u200b\\u2028';

describe('AS logs: values are visible text', () => {
  it('pino: message and string fields carry escapes, not the characters', () => {
    const lines: string[] = [];
    const logger = pinoLogger({ destination: { write: (line: string) => void lines.push(line) } });
    logger.warn(`login refused for ${HOSTILE}`, { username: HOSTILE, nested: { client_name: HOSTILE } });
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u200b\u2028]/);
    const entry = JSON.parse(lines[0]!) as { msg: string; username: string; nested: { client_name: string } };
    expect(entry.msg).toBe(`login refused for ${SHOWN}`);
    expect(entry.username).toBe(SHOWN);
    expect(entry.nested.client_name).toBe(SHOWN);
  });

  it('console: one line per event, whatever the message holds', () => {
    const write = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      consoleLogger('auth-server').warn(`login refused for ${HOSTILE}`, { username: HOSTILE });
      const out = write.mock.calls.map((c) => String(c[0])).join('');
      expect(out.split('\n').filter(Boolean)).toHaveLength(1);
      expect(out).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u200b\u2028]/);
      expect(out).toContain(`login refused for ${SHOWN}`);
    } finally {
      write.mockRestore();
    }
  });
});
