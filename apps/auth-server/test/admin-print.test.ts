import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * Issue 46 item 7: the admin tool prints what the store holds as data, never layout (ECMA-48
 * control functions; OSC 52 writes the clipboard, OSC 8 plants a link). The rows are written
 * into the SQLite store directly, bypassing every check at creation, so the printer alone must
 * hold: one row per account, each column a visible run, controls shown as escapes.
 */
const root = fileURLToPath(new URL('../../../', import.meta.url));
const main = join(root, 'apps/auth-server/dist/admin-main.js');
const dir = mkdtempSync(join(tmpdir(), 'as-admin-print-'));
const file = join(dir, 'as.sqlite');
const env = { ...process.env, DATABASE_URL: `sqlite:${file}`, AS_ADMIN_PASSWORD: '', AS_CONFIG_FILE: '' };
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ESC = '\u001b';
const BEL = '\u0007';
const HOSTILE = [
  { id: 'id-esc', username: `esc${ESC}[2J${ESC}[31mred`, display: `Eve${ESC}]0;title${BEL}` },
  { id: 'id-osc52', username: `clip${ESC}]52;c;Y3VybCBldmlsIHwgc2g=${BEL}`, display: 'Clip' },
  { id: 'id-osc8', username: `link${ESC}]8;;https://evil.example/${ESC}\\click${ESC}]8;;${ESC}\\`, display: 'Link' },
  { id: 'id-tab', username: 'mallory\troot-id\tactive\tRoot', display: 'x' },
  { id: 'id-lf', username: 'mallory\nroot\troot-id\tactive\tRoot', display: 'y\u2028z' },
  { id: 'id-c1', username: 'c1\u009b2J\u200bzw', display: '\u3164' },
  // Issue 46 F5: "Bob" + 120 combining marks (Mn, Me) draw over the columns and rows around it.
  { id: 'id-zalgo', username: 'zalgo', display: `Bob${'\u0336\u0489\u0334\u0338'.repeat(30)}` },
];

/**
 * Anything a terminal acts on or does not show, but TAB and LF (the tool's own columns and rows),
 * and a stack of more than MAX_COMBINING_MARKS (3) combining marks on one base.
 */
const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b\u2028\u3164]|[\p{Mn}\p{Me}]{4}/u;

function admin(args: string[], extraEnv: NodeJS.ProcessEnv = {}) {
  const r = spawnSync(process.execPath, [main, ...args], { env: { ...env, ...extraEnv }, encoding: 'utf8', cwd: root });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe.skipIf(!existsSync(main))('admin tool: stored names are printed as data (issue 46 item 7)', () => {
  beforeAll(() => {
    // The first command creates the schema; the rows then go in by SQL, as a bug or an old version might have left them.
    expect(admin(['keys', 'list']).code).toBe(0);
    const Database = createRequire(import.meta.url)('better-sqlite3') as new (
      path: string,
    ) => {
      prepare(sql: string): { run(...args: unknown[]): unknown };
      close(): void;
    };
    const db = new Database(file);
    const insert = db.prepare(
      'INSERT INTO accounts (id, username, username_key, password_hash, display_name, disabled, created_at, updated_at) VALUES (?, ?, ?, NULL, ?, 0, 0, 0)',
    );
    for (const a of HOSTILE) insert.run(a.id, a.username, a.username.toLowerCase(), a.display);
    db.close();
  });

  it('user list: one row of four columns per account; ESC, OSC 52, OSC 8, C1, TAB, LF, invisibles and combining-mark stacks shown as escapes', () => {
    const r = admin(['user', 'list']);
    expect(r.code, r.stderr).toBe(0);
    expect(RAW.exec(r.stdout)?.[0]).toBeUndefined();
    const rows = r.stdout.trimEnd().split('\n');
    expect(rows).toHaveLength(HOSTILE.length);
    for (const row of rows) expect(row.split('\t')).toHaveLength(4);
    expect(rows.filter((row) => /^(root|mallory)\t/.test(row))).toEqual([]);
    expect(r.stdout).toContain('esc\\u001b[2J\\u001b[31mred\tid-esc\tactive\tEve\\u001b]0;title\\u0007');
    expect(r.stdout).toContain('clip\\u001b]52;c;Y3VybCBldmlsIHwgc2g=\\u0007\tid-osc52');
    expect(r.stdout).toContain('link\\u001b]8;;https://evil.example/\\u001b\\click\\u001b]8;;\\u001b\\\tid-osc8');
    expect(r.stdout).toContain('mallory\\troot-id\\tactive\\tRoot\tid-tab\tactive\tx');
    expect(r.stdout).toContain('mallory\\nroot\\troot-id\\tactive\\tRoot\tid-lf\tactive\ty\\u2028z');
    expect(r.stdout).toContain('c1\\u009b2J\\u200bzw\tid-c1\tactive\t\\u3164');
    // Three marks stay on the base; every further one is shown as an escape, none dropped.
    expect(r.stdout).toContain(`zalgo\tid-zalgo\tactive\tBob\u0336\u0489\u0334${'\\u0338'}${'\\u0336\\u0489\\u0334\\u0338'.repeat(29)}\n`);
  });

  it('an error quoting a stored name stays one line (user link to an identity another account holds)', () => {
    const first = admin(['user', 'link', 'mallory\troot-id\tactive\tRoot', 'https://idp.example', 'sub-1']);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain('mallory\\troot-id\\tactive\\tRoot can sign in as sub-1 at https://idp.example');
    const second = admin(['user', 'link', `esc${ESC}[2J${ESC}[31mred`, 'https://idp.example', 'sub-1']);
    expect(second.code).toBe(1);
    const own = second.stderr.split('\n').filter((l) => l && !l.startsWith('oidc-provider WARNING'));
    expect(own).toEqual(['error: that identity is already linked to "mallory\\troot-id\\tactive\\tRoot"; nothing changed']);
  });
  it('user add --display-name stores the name by the one display rule (displaySafeText): U+3000 padding one space, at most 3 marks per base', () => {
    const given = `Bob${'\u0336\u0489\u0334\u0338'.repeat(30)}${'\u3000'.repeat(150)}(sub root-id)`;
    const add = admin(['user', 'add', 'bob-zalgo', '--display-name', given], { AS_ADMIN_PASSWORD: 'Very-long-pass-123!' });
    expect(add.code, add.stderr).toBe(0);
    const row = admin(['user', 'list'])
      .stdout.split('\n')
      .find((l) => l.startsWith('bob-zalgo\t'));
    expect(row?.split('\t')[3]).toBe('Bob\u0336\u0489\u0334 (sub root-id)');
    const empty = admin(['user', 'add', 'nobody', '--display-name', '\u200b\u3000'], { AS_ADMIN_PASSWORD: 'Very-long-pass-123!' });
    expect(empty.code).not.toBe(0);
    expect(empty.stderr).toContain('display name refused');
  });
});
