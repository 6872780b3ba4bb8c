/**
 * Structured logs: JSON lines from pino, request ids, one audit event per security decision,
 * and no secret of a full flow in any line (DESIGN: tokens, codes, secrets and passwords never
 * appear in logs).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pinoLogger } from '../src/ops/pino-logger.js';
import { redact, scrubText } from '../src/ops/logger.js';
import { startAs, type RunningAs } from './helpers/as.js';
import { runFullFlow, type FlowSecrets } from './helpers/ops-flow.js';

describe('structured JSON logs of a full flow', () => {
  const lines: string[] = [];
  const stdio: string[] = [];
  let t: RunningAs;
  let flow: FlowSecrets;
  const originalStderr = process.stderr.write.bind(process.stderr);
  const originalStdout = process.stdout.write.bind(process.stdout);

  beforeAll(async () => {
    // Anything written to the process streams meanwhile is captured too (and passed on).
    process.stderr.write = ((chunk: unknown, ...rest: unknown[]) => {
      stdio.push(String(chunk));
      return (originalStderr as (...a: unknown[]) => boolean)(chunk, ...rest);
    }) as typeof process.stderr.write;
    process.stdout.write = ((chunk: unknown, ...rest: unknown[]) => {
      stdio.push(String(chunk));
      return (originalStdout as (...a: unknown[]) => boolean)(chunk, ...rest);
    }) as typeof process.stdout.write;
    const logger = pinoLogger({ level: 'debug', destination: { write: (line: string) => void lines.push(line) } });
    t = await startAs({ logger });
    flow = await runFullFlow(t.url);
  });
  afterAll(async () => {
    process.stderr.write = originalStderr;
    process.stdout.write = originalStdout;
    await t?.close();
  });

  const records = () => lines.map((l) => JSON.parse(l) as Record<string, unknown>);

  it('every line is JSON with level, time and msg', () => {
    expect(lines.length).toBeGreaterThan(10);
    for (const record of records()) {
      expect(record).toMatchObject({ level: expect.any(String), time: expect.any(String), msg: expect.any(String) });
    }
  });

  it('DESIGN §Rules: no token, code, verifier, secret, password or cookie of the flow appears in any log line', () => {
    const all = [...lines, ...stdio].join('\n');
    expect(Object.keys(flow.values)).toEqual(
      expect.arrayContaining([
        'access_token',
        'refresh_token',
        'access_token_2',
        'refresh_token_2',
        'code',
        'code_verifier',
        'client_secret',
        'registration_access_token',
        'password',
        'wrong_password',
        'basic_credentials',
      ]),
    );
    expect(Object.keys(flow.values).some((k) => k.startsWith('cookie_'))).toBe(true);
    for (const [name, value] of Object.entries(flow.values)) {
      expect(value.length, name).toBeGreaterThan(7);
      expect(
        all.includes(value),
        `${name} leaked into the logs: ${[...lines, ...stdio]
          .filter((l) => l.includes(value))
          .join(' | ')
          .slice(0, 600)}`,
      ).toBe(false);
    }
  });

  it('one audit event per security decision: registration, login failure and success, consent, issue, refresh, revoke, replay', () => {
    const audits = records()
      .filter((r) => typeof r.audit === 'string')
      .map((r) => r.audit);
    for (const event of [
      'client.registered',
      'login.failed',
      'login.succeeded',
      'consent.granted',
      'token.issued',
      'token.refreshed',
      'token.revoked',
      'grant.revoked',
    ]) {
      expect(audits, event).toContain(event);
    }
    expect(audits.filter((a) => a === 'token.issued')).toHaveLength(1);
    expect(audits.filter((a) => a === 'token.refreshed')).toHaveLength(1);
  });

  it('request ids: a well-formed X-Request-Id is accepted, echoed and on every line of that request', async () => {
    const tagged = records().filter((r) => r.request_id === 'ops-flow-token');
    expect(tagged.map((r) => r.msg)).toEqual(expect.arrayContaining(['request', 'audit token.issued']));
    const res = await fetch(`${t.url}/jwks`, { headers: { 'x-request-id': 'abc-123' } });
    expect(res.headers.get('x-request-id')).toBe('abc-123');
    const forged = await fetch(`${t.url}/jwks`, { headers: { 'x-request-id': 'bad id\twith spaces' } });
    expect(forged.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const plain = await fetch(`${t.url}/jwks`);
    expect(plain.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('access log lines have the route, status and duration, and never the query string', () => {
    const requests = records().filter((r) => r.msg === 'request');
    expect(requests.some((r) => r.route === 'token' && r.status === 200 && typeof r.duration_ms === 'number')).toBe(true);
    const auth = requests.find((r) => r.route === 'authorization');
    expect(auth?.path).toBe('/auth');
  });
});

describe('redaction functions', () => {
  it('secret-looking keys at any depth, credentials inside text', () => {
    const out = redact({
      client_id: 'c1',
      nested: { refresh_token: 'r', list: [{ password: 'p' }], headers: { authorization: 'Bearer x', cookie: 'a=b' } },
      detail: 'POST /token?code=abc123&state=s with Bearer abcdefgh and eyJhbGciOi.eyJzdWIiOi.sig',
    });
    expect(out).toEqual({
      client_id: 'c1',
      nested: {
        refresh_token: '[redacted]',
        list: [{ password: '[redacted]' }],
        headers: { authorization: '[redacted]', cookie: '[redacted]' },
      },
      detail: 'POST /token?code=[redacted]&state=s with Bearer [redacted] and [redacted-jwt]',
    });
    expect(scrubText('client_secret=s3cr3t&password=hunter22')).toBe('client_secret=[redacted]&password=[redacted]');
  });
});
