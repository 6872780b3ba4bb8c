import { describe, expect, it } from 'vitest';
import { ReadonlyUrl } from '../src/readonly-url.js';

describe('ReadonlyUrl (the shared req.auth.resource)', () => {
  const href = 'https://mcp.example.com:8443/mcp?tenant=a#top';
  const settable = ['href', 'protocol', 'username', 'password', 'host', 'hostname', 'port', 'pathname', 'search', 'hash'] as const;

  it('reads as the URL it was made from', () => {
    const url = new ReadonlyUrl(href);
    const plain = new URL(href);
    expect(url).toBeInstanceOf(URL);
    for (const part of [...settable, 'origin'] as const) {
      expect(url[part]).toBe(plain[part]);
    }
    expect(String(url)).toBe(href);
    expect(JSON.stringify({ url })).toBe(JSON.stringify({ url: href }));
    expect([...url.searchParams]).toEqual([['tenant', 'a']]);
    expect(new URL(url).href).toBe(href);
  });

  it('refuses every change: each setter, the searchParams mutators, new properties', () => {
    const url = new ReadonlyUrl(href);
    for (const part of settable) {
      expect(() => {
        (url as unknown as Record<string, string>)[part] = 'https://attacker.example/x';
      }, part).toThrow(TypeError);
    }
    expect(() => url.searchParams.set('tenant', 'b')).toThrow(TypeError);
    expect(() => url.searchParams.append('x', '1')).toThrow(TypeError);
    expect(() => url.searchParams.delete('tenant')).toThrow(TypeError);
    expect(() => url.searchParams.sort()).toThrow(TypeError);
    expect(() => {
      (url as unknown as Record<string, string>).extra = 'x';
    }).toThrow(TypeError);
    expect(() => {
      (url as unknown as Record<string, unknown>).searchParams = new URLSearchParams('tenant=b');
    }).toThrow(TypeError);
    expect(url.href).toBe(href);
    expect(url.searchParams.get('tenant')).toBe('a');
  });

  it('leaves URL itself alone', () => {
    const plain = new URL(href);
    plain.pathname = '/other';
    plain.searchParams.set('tenant', 'b');
    expect(plain.href).toBe('https://mcp.example.com:8443/other?tenant=b#top');
  });
});
