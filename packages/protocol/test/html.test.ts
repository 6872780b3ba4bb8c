import { describe, expect, it } from 'vitest';
import { decodeEntities, escapeHtml, parseForm, parseForms } from '../src/index.js';

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

describe('parseForm / decodeEntities (server-rendered forms read without a browser)', () => {
  it('reads the first form only: its action, hidden fields and field names', () => {
    const form = parseForm(
      '<form action="/a"><input type="hidden" name="csrf" value="1"><input name="login"></form><form action="/b"><input type="hidden" name="z" value="2"></form>',
    );
    expect(form).toEqual({ action: '/a', hidden: { csrf: '1' }, fieldNames: ['csrf', 'login'], submits: [] });
  });
  it('lists the named submit buttons with their values (what a click sends), not other buttons', () => {
    const form = parseForm(
      `<form action="/c"><button type="submit" name="connect" value="yes &amp; go">Connect</button><button name="action" value="deny">No</button>` +
        `<button type="button" name="x" value="1">x</button><button type="reset" name="r">r</button><button>unnamed</button>` +
        `<input type="submit" name="go" value="Go"><input type="text" name="t"></form>`,
    );
    expect(form?.submits).toEqual([
      { name: 'connect', value: 'yes & go' },
      { name: 'action', value: 'deny' },
      { name: 'go', value: 'Go' },
    ]);
    expect(form?.fieldNames).toEqual(['go', 't']);
  });
  it('parseForms reads every form with an action, in order', () => {
    const forms = parseForms(
      '<form action="/up"><button name="upstream" value="0">IdP</button></form><form method="post"></form><form action="/login"><input type="password" name="password"></form>',
    );
    expect(forms.map((f) => f.action)).toEqual(['/up', '/login']);
    expect(forms[0]?.submits).toEqual([{ name: 'upstream', value: '0' }]);
    expect(forms[1]?.fieldNames).toEqual(['password']);
    expect(parseForms('<p>none</p>')).toEqual([]);
  });
  it('a page without a form, or a form without an action, gives undefined', () => {
    expect(parseForm('<p>no form</p>')).toBeUndefined();
    expect(parseForm('<form method="post"><input name="x"></form>')).toBeUndefined();
  });
  it('decodes what escapeHtml wrote, in action and values alike', () => {
    const tricky = `/i/"a"&b<c>'d'`;
    const form = parseForm(`<form action="${escapeHtml(tricky)}"><input type="hidden" name="v" value="${escapeHtml(tricky)}"></form>`);
    expect(form?.action).toBe(tricky);
    expect(form?.hidden.v).toBe(tricky);
    expect(decodeEntities(escapeHtml('&amp;'))).toBe('&amp;');
  });
});
