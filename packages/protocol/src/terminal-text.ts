/**
 * What a server says is data, never layout. Text from servers (tool names and results, PRM
 * `resource`, AS `issuer` and `error_description`, stored usernames) reaches terminals and logs;
 * raw, a control or invisible character in it could rewrite the screen (ESC/CSI/OSC: clear, title,
 * OSC 52 clipboard, OSC 8 links), forge whole lines (LF, CR, U+2028/2029), reorder what a line
 * shows (bidi controls, "Trojan Source", CVE-2021-42574) or hide text (zero-width characters,
 * BOM, soft hyphen, tag characters, Hangul fillers, variation selectors). Every such character of
 * a value is written as a visible escape (`\u200b`, `\n`) instead, so nothing is dropped silently
 * and nothing is laid out. Only the program's own text (template literals, help) keeps its
 * newlines and tabs.
 */

declare const TERMINAL_TEXT: unique symbol;

/**
 * Text that is safe to write to a terminal: built only by {@link terminalText}, {@link ownLayout},
 * {@link joinText} and {@link terminalJson}. The writers of {@link createTerminal} take nothing else,
 * so a value pasted into a line without the tag does not compile.
 */
export type TerminalText = string & { readonly [TERMINAL_TEXT]: true };

/**
 * Unicode Cc (C0, DEL, C1), Cf (format: ZWSP/ZWNJ/ZWJ, BOM, soft hyphen, bidi, tags), Zl, Zp, lone
 * surrogates, and Default_Ignorable_Code_Point (Hangul fillers U+115F U+1160 U+3164 U+FFA0,
 * variation selectors, combining grapheme joiner …): nothing a value shows may be invisible or a
 * line break.
 */
const INVISIBLE_SET = String.raw`[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Default_Ignorable_Code_Point}]`;

/**
 * How many combining marks one base character may carry on screen. Nonspacing (Mn) and enclosing
 * (Me) marks draw over the column of the character before them, and a stack of them ("Zalgo")
 * paints over the neighbouring columns and the lines above and below. UAX #15 §13 (Stream-Safe
 * Text Format) caps a run of non-starters at 30 so that normalization stays bounded; that is a
 * processing bound, far above what a line can show. Three is the display bound: natural text
 * needs at most two or three marks on one base (Vietnamese and Thai two, pointed Hebrew with
 * cantillation three), and three still stay inside one line's height.
 */
export const MAX_COMBINING_MARKS = 3;

/**
 * A combining mark (Mn, Me) beyond {@link MAX_COMBINING_MARKS} on one base, or one with no base in
 * the text (it would combine with whatever the terminal showed before). The one rule for both the
 * terminal writer and {@link displaySafeText}.
 */
export const EXCESS_COMBINING_MARK = String.raw`(?:(?<=[\p{Mn}\p{Me}]{${MAX_COMBINING_MARKS}})|(?<=^[\p{Mn}\p{Me}]*))[\p{Mn}\p{Me}]`;

const INVISIBLE = new RegExp(`${INVISIBLE_SET}|${EXCESS_COMBINING_MARK}`, 'gu');
/** The same set less newline and tab, for the program's own layout. */
const INVISIBLE_BUT_LAYOUT = new RegExp(`(?![\n\t])${INVISIBLE_SET}|${EXCESS_COMBINING_MARK}`, 'gu');

const SHORT: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function escapeCodePoint(c: string): string {
  const short = SHORT[c];
  if (short) return short;
  const cp = c.codePointAt(0) ?? 0;
  return cp > 0xffff ? `\\u{${cp.toString(16)}}` : `\\u${cp.toString(16).padStart(4, '0')}`;
}

/**
 * A value as one visible run of text: every control, invisible and line-breaking character, and
 * every combining mark beyond {@link MAX_COMBINING_MARKS} on one base, written as an escape. For anything a server or a store said, wherever it is printed or echoed.
 */
export function visibleText(value: unknown): string {
  return String(value).replace(INVISIBLE, escapeCodePoint);
}

/** True when {@link visibleText} would change nothing (no control, invisible, line break or mark stack). */
export function isVisibleText(value: string): boolean {
  INVISIBLE.lastIndex = 0;
  return !INVISIBLE.test(value);
}

/**
 * Tagged template: the literal parts are the program's layout (newlines and tabs kept), every
 * `${value}` is data ({@link visibleText}: one visible run, never a line of its own).
 */
export function terminalText(strings: TemplateStringsArray, ...values: unknown[]): TerminalText {
  let text = ownLayout(strings[0] ?? '') as string;
  for (let i = 0; i < values.length; i++) text += visibleText(values[i]) + ownLayout(strings[i + 1] ?? '');
  return text as TerminalText;
}

/**
 * Text the program composed itself (usage, help, argument errors that quote the user's own
 * arguments): newlines and tabs are layout; every other control or invisible character is still
 * escaped. Never for a server's or a store's value: use {@link terminalText}.
 */
export function ownLayout(text: string): TerminalText {
  return text.replace(INVISIBLE_BUT_LAYOUT, escapeCodePoint) as TerminalText;
}

/** Joins safe texts with a separator of the program's own. */
export function joinText(parts: readonly TerminalText[], separator = ''): TerminalText {
  return parts.join(ownLayout(separator)) as TerminalText;
}

/**
 * A value as indented JSON (without the final newline), losing nothing: JSON.stringify escapes
 * C0 in strings; DEL, C1 and the invisible characters (including U+2028/2029) are written as
 * `\uXXXX` escapes too, so the output parses back to the same value.
 */
export function terminalJson(value: unknown): TerminalText {
  const json = JSON.stringify(value, null, 2) ?? 'undefined';
  // JSON.stringify escapes C0 inside strings, so a raw newline or tab is indentation.
  return json.replace(INVISIBLE_BUT_LAYOUT, (c) => {
    let out = '';
    for (let i = 0; i < c.length; i++) out += `\\u${c.charCodeAt(i).toString(16).padStart(4, '0')}`;
    return out;
  }) as TerminalText;
}

export interface Terminal {
  /** Writes safe text to stdout. */
  out(text: TerminalText): void;
  /** Writes safe text to stderr. */
  err(text: TerminalText): void;
  /** Writes a value as indented JSON and a newline to stdout. */
  json(value: unknown): void;
  /** True when the terminal was created with `colour`: {@link Terminal.style} then colours. */
  readonly colour: boolean;
  /** `text` in a colour or weight when the terminal shows colour, else `text` unchanged. */
  style(style: TerminalStyle, text: TerminalText): TerminalText;
}

/**
 * The only styles the program may put on screen: SGR colours and weights (ECMA-48 §8.3.117),
 * nothing that hides text (conceal, same colour as the background), moves the cursor or clears.
 */
export type TerminalStyle = 'bold' | 'dim' | 'red' | 'green' | 'yellow' | 'cyan';

const SGR: Record<TerminalStyle, readonly [number, number]> = {
  bold: [1, 22],
  dim: [2, 22],
  red: [31, 39],
  green: [32, 39],
  yellow: [33, 39],
  cyan: [36, 39],
};

/** Exactly the sequences {@link SGR} writes; every other escape stays escaped by the writer. */
const STYLE_SEQUENCE = new RegExp(String.raw`(\u001b\[(?:${[...new Set(Object.values(SGR).flat())].join('|')})m)`);

/** The writer's last pass with colour: the allowed style sequences kept, everything between them {@link ownLayout}. */
function withStyles(text: string): string {
  return text
    .split(STYLE_SEQUENCE)
    .map((part, i) => (i % 2 === 1 ? part : ownLayout(part)))
    .join('');
}

/**
 * The one writer of the CLI and the admin tool: wraps the raw stream writers, which nothing else
 * holds. Each text passes {@link ownLayout} once more on the way out, so even a wrongly branded
 * string cannot carry an escape sequence to the terminal; with `colour` (a TTY the user did not
 * ask to keep plain, `NO_COLOR`), only the exact colour sequences of {@link TerminalStyle} pass.
 */
export function createTerminal(
  raw: { stdout: (text: string) => void; stderr: (text: string) => void },
  options: { colour?: boolean } = {},
): Terminal {
  const colour = options.colour === true;
  const pass = colour ? withStyles : ownLayout;
  const out = (text: TerminalText) => raw.stdout(pass(text));
  return {
    out,
    err: (text) => raw.stderr(pass(text)),
    json: (value) => out(`${terminalJson(value)}\n` as TerminalText),
    colour,
    style: (style, text) => {
      if (!colour) return text;
      const [on, off] = SGR[style];
      return `\u001b[${on}m${text}\u001b[${off}m` as TerminalText;
    },
  };
}
