// Unit tests of the sealed grace record (src/refresh-grace/sealed-response.ts) and the early resource check.
import { describe, expect, it } from 'vitest';
import {
  graceSlot,
  isFailureMarker,
  openGraceRecord,
  sealGracePayload,
  type GracePayload,
} from '../src/tokens/refresh-grace/sealed-response.js';
import { checkRefreshResource } from '../src/tokens/refresh-grace/resource-check.js';
import { installRefreshGrace, refreshGraceConfigProblems } from '../src/tokens/refresh-grace.js';

const token = 'rt-0123456789abcdefghijklmnopqrstuvwxyzABCDE';
const payload: GracePayload = {
  clientId: 'client-1',
  jkt: 'thumb',
  request: '[null,"http://127.0.0.1:3999/mcp"]',
  body: { access_token: 'at-secret-value', refresh_token: 'rt-next-secret-value', token_type: 'Bearer', expires_in: 300 },
  issuedAt: 1,
};

describe('sealed grace record', () => {
  it('the slot is SHA-256 of the token (base64url), never the token', () => {
    expect(graceSlot(token)).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(graceSlot(token)).not.toContain(token);
    expect(graceSlot(token)).not.toBe(graceSlot(`${token}x`));
  });

  it('round-trips for the holder of the token; fresh salt and iv every time', () => {
    const slot = graceSlot(token);
    const one = sealGracePayload(token, slot, payload);
    const two = sealGracePayload(token, slot, payload);
    expect(openGraceRecord(token, slot, one)).toEqual(payload);
    expect(one).not.toEqual(two);
    const raw = JSON.stringify(one);
    for (const secret of [token, 'at-secret-value', 'rt-next-secret-value', 'client-1']) expect(raw.includes(secret)).toBe(false);
  });

  it('refuses another token, another slot (AAD), a tampered ciphertext, tag or salt, and junk', () => {
    const slot = graceSlot(token);
    const record = sealGracePayload(token, slot, payload) as { v: 1; salt: string; iv: string; ct: string };
    expect(openGraceRecord(`${token}x`, slot, record)).toBeUndefined();
    expect(openGraceRecord(token, graceSlot('other'), record)).toBeUndefined();
    const ct = Buffer.from(record.ct, 'base64url');
    const flip = (buf: Buffer, i: number) => {
      const copy = Buffer.from(buf);
      copy[i] = copy[i]! ^ 1;
      return copy.toString('base64url');
    };
    expect(openGraceRecord(token, slot, { ...record, ct: flip(ct, 0) })).toBeUndefined();
    expect(openGraceRecord(token, slot, { ...record, ct: flip(ct, ct.length - 1) })).toBeUndefined();
    expect(openGraceRecord(token, slot, { ...record, salt: flip(Buffer.from(record.salt, 'base64url'), 0) })).toBeUndefined();
    expect(openGraceRecord(token, slot, { ...record, ct: 'AA' })).toBeUndefined();
    for (const junk of [undefined, null, 'x', 42, {}, { v: 2 }, { v: 1, failed: true }])
      expect(openGraceRecord(token, slot, junk)).toBeUndefined();
  });

  it('tells a failure marker apart', () => {
    expect(isFailureMarker({ v: 1, failed: true })).toBe(true);
    expect(isFailureMarker(sealGracePayload(token, graceSlot(token), payload))).toBe(false);
    expect(isFailureMarker(undefined)).toBe(false);
  });
});

describe('early RFC 8707 resource check at the refresh', () => {
  const granted = new Set(['https://mcp.example.com/mcp']);
  it('RFC 8707 §2.2: accepts no resource or a granted one; refuses others, several, and a trailing-slash variant with invalid_target', () => {
    expect(() => checkRefreshResource(undefined, granted)).not.toThrow();
    expect(() => checkRefreshResource('https://mcp.example.com/mcp', granted)).not.toThrow();
    expect(() => checkRefreshResource(['https://mcp.example.com/mcp'], granted)).not.toThrow();
    for (const bad of [
      'https://mcp.example.com/mcp/',
      'https://other.example/mcp',
      ['https://mcp.example.com/mcp', 'https://other.example/mcp'],
      [42],
    ]) {
      expect(() => checkRefreshResource(bad, granted)).toThrow(expect.objectContaining({ error: 'invalid_target' }));
    }
    expect(() => checkRefreshResource('https://mcp.example.com/mcp', undefined)).toThrow(
      expect.objectContaining({ error: 'invalid_target' }),
    );
  });
});

describe('refreshTokens.reuseGraceSeconds problems', () => {
  it('0..60 integers are fine, the rest is named', () => {
    expect(refreshGraceConfigProblems(undefined)).toEqual([]);
    expect(refreshGraceConfigProblems(0)).toEqual([]);
    expect(refreshGraceConfigProblems(60)).toEqual([]);
    expect(refreshGraceConfigProblems(61)[0]).toMatch(/^refreshTokens\.reuseGraceSeconds: /);
    expect(refreshGraceConfigProblems(2.5)).toHaveLength(1);
  });
});

describe('what the grace relies on in oidc-provider (public surface only)', () => {
  const logger = () => {
    const lines: Array<{ level: string; message: string }> = [];
    const at = (level: string) => (message: string) => void lines.push({ level, message });
    return { lines, logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') } };
  };

  it('something other than a provider fails loudly at start-up, naming the way out', async () => {
    const { logger: log } = logger();
    await expect(installRefreshGrace({} as never, { kv: {} as never, graceSeconds: 10, logger: log })).rejects.toThrow(
      /oidc-provider.*reuseGraceSeconds to 0/,
    );
  });

  it('a refresh answered without passing the findAccount checkpoint (a provider whose grant changed) is logged as an error naming the way out', async () => {
    const { lines, logger: log } = logger();
    let middleware: ((ctx: unknown, next: () => Promise<void>) => Promise<void>) | undefined;
    const provider = {
      use: (fn: typeof middleware) => {
        middleware = fn;
      },
      RefreshToken: { find: async () => undefined },
    };
    await installRefreshGrace(provider as never, { kv: {} as never, graceSeconds: 10, logger: log });
    const ctx: Record<string, unknown> = {};
    await middleware!(ctx, async () => {
      ctx.oidc = { route: 'token', params: { grant_type: 'refresh_token', refresh_token: 'rt-secret-value' }, client: { clientId: 'c' } };
      ctx.status = 200;
      ctx.body = { access_token: 'at-secret-value', refresh_token: 'rt-next-secret-value', token_type: 'Bearer' };
    });
    const errors = lines.filter((l) => l.level === 'error');
    expect(errors).toHaveLength(1);
    expect(errors[0]!.message).toMatch(/checkpoint.*reuseGraceSeconds to 0/);
    expect(JSON.stringify(lines)).not.toMatch(/secret-value/);
  });
});
