import { describe, expect, it } from 'vitest';
import { displaySafeText, identityKey, isUsername, MAX_EMAIL_NAME_LENGTH, MAX_USERNAME_LENGTH, usernameProblem } from '../src/identity.js';

/**
 * One canonical identity (issue 40 items 1 and 3, issue 46 item 7): the key folds what a person
 * cannot tell apart (UTS #15 NFKC, then lower case); creation refuses what is not already in its
 * canonical, display-safe form (UTS #39 §5 mixed-script detection for Latin/Greek/Cyrillic, RFC
 * 5321 §4.5.3.1.3 for the length of an e-mail-like name).
 */
describe('identityKey: lookalikes are one key', () => {
  it.each([
    ['bob', 'bob'],
    ['BOB', 'bob'],
    ['𝖇𝖔𝖇', 'bob'],
    ['ｂｏｂ', 'bob'],
    ['ｌｅｅ@ａｃｍｅ.example', 'lee@acme.example'],
    ['Pat@Acme.Example', 'pat@acme.example'],
    ['ﬁona', 'fiona'],
  ])('%j → %j', (name, key) => expect(identityKey(name)).toBe(key));

  it('is the key stored by earlier versions (NFKC then lower case), so stored username_key columns stay valid', () => {
    for (const name of ['Alice', 'Ångström', 'İstanbul', 'ǅemal', 'ΣΊΣΥΦΟΣ']) {
      expect(identityKey(name)).toBe(name.normalize('NFKC').toLowerCase());
    }
  });

  it('is stable: the key of a key is itself', () => {
    for (const name of ['𝖇𝖔𝖇', 'ｌｅｅ@ａｃｍｅ.example', 'Straße', 'ΣΊΣΥΦΟΣ'])
      expect(identityKey(identityKey(name))).toBe(identityKey(name));
  });
});

describe('usernameProblem: only canonical, display-safe names may be created', () => {
  /** `name`'s problem (undefined: none), and isUsername says the same. */
  const expectProblem = (name: unknown, problem: string | undefined) => {
    expect(usernameProblem(name)).toBe(problem);
    expect(isUsername(name)).toBe(problem === undefined);
  };

  it.each([
    'alice',
    'Alice',
    'pat@acme.example',
    'Pat Smith',
    'dave-1a2b3c4d',
    'Acme IdP:U019488227',
    'José',
    'Ωμέγα',
    'Жанна',
    '山田太郎',
    'やまだ',
  ])('%j is accepted', (name) => expectProblem(name, undefined));

  it.each([
    [undefined, 'not-a-string'],
    [42, 'not-a-string'],
    ['', 'empty'],
    ['alice\u200b', 'invisible-character'],
    ['al\u200dice', 'invisible-character'],
    ['\ufeffalice', 'invisible-character'],
    ['ali\u00adce', 'invisible-character'],
    ['alice\u202egnp.exe', 'invisible-character'],
    ['alice\u{e0041}', 'invisible-character'],
    ['alice\ufe0f', 'invisible-character'],
    ['\u3164alice', 'invisible-character'],
    ['ali\tce', 'control-character'],
    ['alice\nadmin', 'control-character'],
    ['alice\r', 'control-character'],
    ['alice\u0000', 'control-character'],
    ['alice\u2028', 'control-character'],
    ['alice\u2029', 'control-character'],
    ['alice\ud800', 'control-character'],
    ['alice\ue000', 'control-character'],
    [' alice', 'whitespace'],
    ['alice ', 'whitespace'],
    ['pat  smith', 'whitespace'],
    ['pat\u00a0smith', 'whitespace'],
    ['pat\u3000smith', 'whitespace'],
    ['𝖇𝖔𝖇', 'not-canonical'],
    ['ｌｅｅ@ａｃｍｅ.example', 'not-canonical'],
    ['ﬁona', 'not-canonical'],
    ['e\u0301mile', 'not-canonical'],
    ['pаypal', 'mixed-script'],
    ['alicе@acme.example', 'mixed-script'],
    ['Οmega-x', 'mixed-script'],
  ])('%j is refused: %s', (name, problem) => expectProblem(name, problem));

  it('bounds the length: 100 code points for a name, 254 for an e-mail-like name, and a 100 KB name', () => {
    expect(usernameProblem('a'.repeat(MAX_USERNAME_LENGTH))).toBeUndefined();
    expect(usernameProblem('a'.repeat(MAX_USERNAME_LENGTH + 1))).toBe('too-long');
    expect(usernameProblem('山'.repeat(MAX_USERNAME_LENGTH))).toBeUndefined();
    const email = (n: number) => `${'p'.repeat(n - '@acme.example'.length)}@acme.example`;
    expect(usernameProblem(email(MAX_EMAIL_NAME_LENGTH))).toBeUndefined();
    expect(usernameProblem(email(MAX_EMAIL_NAME_LENGTH + 1))).toBe('too-long');
    expect(usernameProblem('a'.repeat(100 * 1024))).toBe('too-long');
    expect(usernameProblem(`${'a'.repeat(100 * 1024)}@acme.example`)).toBe('too-long');
  });
});

describe('displaySafeText: a display name another party chose', () => {
  it.each([
    ['Pat Smith', 'Pat Smith'],
    ['  Pat\t\nSmith  ', 'Pat Smith'],
    ['Pat\u200b\u202eSmith', 'Pat Smith'],
    ['Ｐａｔ', 'Pat'],
    ['Pat\u2028Admin', 'Pat Admin'],
    ['\u200b\u200b', undefined],
    ['   ', undefined],
    [42, undefined],
    [undefined, undefined],
    // Issue 46 F4: any Unicode white space run is one space (U+3000 padding, NBSP, em space).
    [`alice${'\u3000'.repeat(150)}(sub 1)`, 'alice (sub 1)'],
    ['a\u00a0\u2003\u205f\u3000b', 'a b'],
    // Issue 46 F5: at most MAX_COMBINING_MARKS marks on one base (the terminal writer's bound).
    [`Bob${'\u0336\u0489\u0334\u0338'.repeat(30)}`, 'Bob\u0336\u0489\u0334'],
    ['\u0336\u0336x', 'x'],
    ['Vie\u0323\u0302t Nam', 'Việt Nam'],
  ])('%j → %j', (value, safe) => expect(displaySafeText(value)).toBe(safe));

  it('is bounded (a 100 KB value gives at most 100 code points)', () => {
    expect([...(displaySafeText('x'.repeat(100 * 1024)) ?? '')]).toHaveLength(MAX_USERNAME_LENGTH);
    expect(displaySafeText('y'.repeat(100), 10)).toBe('y'.repeat(10));
  });
});
