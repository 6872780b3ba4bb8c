import { describe, expect, it } from 'vitest';
import { escapeHtml } from '../src/index.js';

describe('escapeHtml (OWASP XSS prevention rules 1 and 2: text and quoted attributes)', () => {
  it('escapes the five characters that end text or an attribute value', () => {
    expect(escapeHtml(`<img src=x onerror="alert('1')">&`)).toBe('&lt;img src=x onerror=&quot;alert(&#39;1&#39;)&quot;&gt;&amp;');
  });
  it('escapes & first (no double escaping of its own output)', () => {
    expect(escapeHtml('&lt;')).toBe('&amp;lt;');
  });
  it('turns null and undefined into the empty string and other values into text', () => {
    expect(escapeHtml(undefined)).toBe('');
    expect(escapeHtml(null)).toBe('');
    expect(escapeHtml(42)).toBe('42');
  });
});
