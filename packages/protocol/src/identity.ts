/**
 * One canonical identity for account names (usernames and e-mail-like names). Lookup,
 * uniqueness, the login throttle and e-mail linking all compare {@link identityKey}, so two
 * spellings a person cannot tell apart (`𝖇𝖔𝖇`, `ｂｏｂ`, `BOB`) are one account and one lockout,
 * never two. Creation is stricter than lookup: {@link usernameProblem} refuses a name that is
 * not already in its canonical, display-safe form, so what an operator sees in `user list` is
 * what the key was computed from (UTS #15 NFKC, UTS #39 §5 mixed-script, RFC 5321 §4.5.3.1).
 */

import { EXCESS_COMBINING_MARK } from './terminal-text.js';

/** Longest name that contains `@` (RFC 5321 §4.5.3.1.3 path limit less the angle brackets). */
export const MAX_EMAIL_NAME_LENGTH = 254;
/** Longest other name, in code points. */
export const MAX_USERNAME_LENGTH = 100;

/**
 * The comparison key: NFKC (compatibility forms such as full-width and mathematical letters
 * fold to their plain letters), then lower case. It is exactly the `username_key` every store
 * has always written, so keys stored by earlier versions stay valid without a migration.
 */
export function identityKey(name: string): string {
  return name.normalize('NFKC').toLowerCase();
}

export type UsernameProblem =
  | 'not-a-string'
  | 'empty'
  | 'too-long'
  | 'control-character'
  | 'invisible-character'
  | 'whitespace'
  | 'not-canonical'
  | 'mixed-script';

// Cc controls (TAB, LF, DEL…), Cf format characters (ZWSP, ZWJ, BOM, soft hyphen, bidi
// controls, tag characters), Zl/Zp separators, private use, lone surrogates.
const CONTROL = /[\p{Cc}\p{Zl}\p{Zp}\p{Co}\p{Cs}]/u;
// Default-ignorable code points render as nothing: Cf plus Hangul fillers, variation
// selectors, the combining grapheme joiner.
const INVISIBLE = /[\p{Cf}\p{Default_Ignorable_Code_Point}]/u;
const SPACE_OTHER_THAN_ASCII = /(?! )\p{White_Space}/u;
const CONFUSABLE_SCRIPTS = [/\p{Script=Latin}/u, /\p{Script=Greek}/u, /\p{Script=Cyrillic}/u];

/**
 * Why `name` may not be given to a new account (or a renamed one); undefined when it may.
 * Allowed: NFKC-stable text of printable characters, single inner ASCII spaces, at most
 * {@link MAX_USERNAME_LENGTH} code points ({@link MAX_EMAIL_NAME_LENGTH} for a name with `@`),
 * letters of at most one of Latin, Greek and Cyrillic (the scripts whose letters look alike).
 */
export function usernameProblem(name: unknown): UsernameProblem | undefined {
  if (typeof name !== 'string') return 'not-a-string';
  if (name === '') return 'empty';
  // Bounded before any other work: a 100 KB name is refused on its length alone.
  const max = name.includes('@') ? MAX_EMAIL_NAME_LENGTH : MAX_USERNAME_LENGTH;
  if (name.length > 2 * max || [...name].length > max) return 'too-long';
  if (CONTROL.test(name)) return 'control-character';
  if (INVISIBLE.test(name)) return 'invisible-character';
  if (SPACE_OTHER_THAN_ASCII.test(name) || name.trim() !== name || name.includes('  ')) return 'whitespace';
  if (name.normalize('NFKC') !== name) return 'not-canonical';
  if (CONFUSABLE_SCRIPTS.filter((script) => script.test(name)).length > 1) return 'mixed-script';
  return undefined;
}

export function isUsername(name: unknown): name is string {
  return usernameProblem(name) === undefined;
}

/**
 * Free text another party chose (an upstream provider's `name` claim) made safe to show as a
 * display name: NFKC, invisible and control characters dropped, runs of any Unicode white space
 * (U+3000 ideographic space, NBSP, …) made one space, combining marks beyond the terminal
 * writer's bound dropped (`MAX_COMBINING_MARKS` in terminal-text.ts), at most `max` code points;
 * undefined when nothing is left. The one rule for every name a server or provider chose, wherever
 * it is shown (AS pages, CLI, client events).
 */
export function displaySafeText(value: unknown, max = MAX_USERNAME_LENGTH): string | undefined {
  if (typeof value !== 'string') return undefined;
  const bounded = [...value.slice(0, 8 * max)].slice(0, 4 * max).join('');
  const text = bounded
    .normalize('NFKC')
    .replace(new RegExp(`${CONTROL.source}|${INVISIBLE.source}`, 'gu'), ' ')
    .replace(/\p{White_Space}+/gu, ' ')
    .trim()
    .replace(new RegExp(EXCESS_COMBINING_MARK, 'gu'), '');
  const out = [...text].slice(0, max).join('').trim();
  return out === '' ? undefined : out;
}
