import { describe, expect, it } from 'vitest';
import { createTerminal, stripControls, terminalJson } from '../src/cli/terminal.js';

// ECMA-48: C0 (U+0000–U+001F), DEL (U+007F) and C1 (U+0080–U+009F) control functions.
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

describe('CLI terminal output', () => {
  it('stripControls removes every C0 control but \\n and \\t, DEL and every C1 control; everything else is kept', () => {
    for (let c = 0; c <= 0xa0; c++) {
      const ch = String.fromCharCode(c);
      const kept = c === 0x09 || c === 0x0a || (c >= 0x20 && c <= 0x7e) || c === 0xa0;
      expect(stripControls(`a${ch}b`), `U+${c.toString(16).padStart(4, '0')}`).toBe(kept ? `a${ch}b` : 'ab');
    }
    expect(stripControls('\u001b]52;c;ZWNobw==\u0007\u001b[2Jtext\u009b31m\r\n')).toBe(']52;c;ZWNobw==[2Jtext31m\n');
    expect(stripControls('déjà vu — ✓ 日本語 🙂 \u2028')).toBe('déjà vu — ✓ 日本語 🙂 \u2028');
  });

  it('Trojan Source (CVE-2021-42574): bidirectional controls are removed, so a name cannot display reordered', () => {
    for (const bidi of [
      '\u061c',
      '\u200e',
      '\u200f',
      '\u202a',
      '\u202b',
      '\u202c',
      '\u202d',
      '\u202e',
      '\u2066',
      '\u2067',
      '\u2068',
      '\u2069',
    ]) {
      expect(stripControls(`safe${bidi}etirw`), `U+${bidi.charCodeAt(0).toString(16)}`).toBe('safeetirw');
    }
    const json = terminalJson({ name: 'a\u202eb' });
    expect(json).toContain('\\u202e');
    expect(JSON.parse(json)).toEqual({ name: 'a\u202eb' });
  });

  it('terminalJson leaves no raw control in the output and parses back to the same value', () => {
    const value = { name: 'x\u001b[2J\u0007', text: 'a\u009b31m\u009d0;t\u009c\u007fz', list: ['\u0000', '\n\t'], n: 1 };
    const json = terminalJson(value);
    expect(CONTROL.test(json)).toBe(false);
    expect(json).toContain('\\u009b');
    expect(JSON.parse(json)).toEqual(value);
  });

  it('createTerminal: out, err and json all strip controls', () => {
    const out: string[] = [];
    const err: string[] = [];
    const term = createTerminal({ stdout: (t) => void out.push(t), stderr: (t) => void err.push(t) });
    term.out('o\u001b[31m\n');
    term.err('e\u009d0;title\u0007\n');
    term.json({ v: '\u0085' });
    expect(out[0]).toBe('o[31m\n');
    expect(err[0]).toBe('e0;title\n');
    expect(out[1]).toBe('{\n  "v": "\\u0085"\n}\n');
  });
});
