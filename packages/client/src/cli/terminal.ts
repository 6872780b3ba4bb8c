/**
 * The CLI's only way to print. Much of what it prints comes from servers (tool names,
 * descriptions and results, PRM `resource`, AS `error_description`, SDK error texts); raw, an
 * ESC / CSI / OSC sequence in them could rewrite the screen, forge prompts or lines, set the window
 * title, write the clipboard (OSC 52) or plant links (OSC 8). Every string therefore loses its
 * C0 controls (except newline and tab), DEL and C1 controls (8-bit CSI/OSC) on the way out, and
 * the Unicode bidirectional controls that reorder what the line shows ("Trojan Source",
 * CVE-2021-42574): a tool named `safe\u202Eetirw` must not display as something else.
 */

/** C0 except `\t` (U+0009) and `\n` (U+000A), DEL, C1 (U+0080–U+009F), bidi controls. */
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
/** What JSON.stringify leaves raw among them. */
const JSON_RAW_CONTROLS = /[\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** Removes terminal control characters, keeping `\n` and `\t`. */
export function stripControls(text: string): string {
  return text.replace(CONTROLS, '');
}

/**
 * JSON for the terminal, without losing data: JSON.stringify already escapes C0 in strings but
 * leaves DEL, C1 and bidi controls raw; those are written as `\uXXXX` escapes (still the same JSON value).
 */
export function terminalJson(value: unknown): string {
  return (JSON.stringify(value, null, 2) ?? 'undefined').replace(
    JSON_RAW_CONTROLS,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

export interface Terminal {
  /** Writes text to stdout, controls removed. */
  out(text: string): void;
  /** Writes text to stderr, controls removed. */
  err(text: string): void;
  /** Writes a value as indented JSON (and a newline) to stdout. */
  json(value: unknown): void;
}

/** Wraps raw stream writers; nothing else in the CLI holds them. */
export function createTerminal(raw: { stdout: (text: string) => void; stderr: (text: string) => void }): Terminal {
  const out = (text: string) => raw.stdout(stripControls(text));
  return {
    out,
    err: (text) => raw.stderr(stripControls(text)),
    json: (value) => out(`${terminalJson(value)}\n`),
  };
}
