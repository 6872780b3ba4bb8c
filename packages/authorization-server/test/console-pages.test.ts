/**
 * The console pages' small rules (issue 44): what the forms' inputs become, where a change may
 * return to, when a sign-in is fresh enough for a change, and that the page builders escape
 * every value. The pages themselves are driven in test/browser/console.test.ts and attacked in
 * test/security/console.attack.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { hostList } from '../src/console/sections/cimd.js';
import { parseUtcMinute } from '../src/console/sections/audit.js';
import { backPath } from '../src/console/sections/grants.js';
import { freshEnough, type Operator } from '../src/admin/operator.js';
import { consolePage, postButton, table } from '../src/console/layout.js';

const HOSTILE = `<script>alert(1)</script>"'&`;

describe('console pages', () => {
  it('hostList(): one host per line or comma, lower-cased, blanks dropped', () => {
    expect(hostList(' Example.com\n*.Apps.example.org, ,tools.example.net\r\n')).toEqual([
      'example.com',
      '*.apps.example.org',
      'tools.example.net',
    ]);
    expect(hostList('')).toEqual([]);
  });

  it('parseUtcMinute(): a datetime-local value read as UTC; anything else is no bound', () => {
    expect(parseUtcMinute('2026-12-07T16:05')).toBe(Date.UTC(2026, 11, 7, 16, 5));
    for (const bad of ['', '2026-12-07', '2026-13-40T99:99', '1796659774469', '2026-12-07T16:05:00Z'])
      expect(parseUtcMinute(bad)).toBeUndefined();
  });

  it('backPath(): a revoke returns only to a console page of ours (no open redirect)', () => {
    expect(backPath('/grants')).toBe('/grants');
    expect(backPath('/users/0b7c-42')).toBe('/users/0b7c-42');
    for (const bad of ['//evil.example/x', 'https://evil.example/', '/users/../../x', '/grants?x=1', '/users/a/b', ''])
      expect(backPath(bad)).toBe('/grants');
  });

  it('freshEnough(): OpenID Connect Core §3.1.2.1 max_age applied to changes; no sign-in time is never fresh', () => {
    const at = (loginTs: number) => ({ loginTs }) as Operator;
    const now = 1_800_000_000_000;
    expect(freshEnough(at(now / 1000 - 300), 300, now)).toBe(true);
    expect(freshEnough(at(now / 1000 - 301), 300, now)).toBe(false);
    expect(freshEnough(at(0), 300, now)).toBe(false);
  });

  it('the page builders escape every value (names, paths, tokens, cells are the caller’s HTML)', () => {
    const frame = { serviceName: HOSTILE, base: '/console', current: '/users', operator: HOSTILE, csrf: HOSTILE };
    const html =
      consolePage(frame, HOSTILE, '<p>body</p>') + postButton(frame, '/users/disable', HOSTILE, { account_id: HOSTILE }, 'danger', HOSTILE);
    expect(html).not.toContain('<script>');
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&amp;');
    expect(html).toContain('<a href="/console/users" aria-current="page">Users</a>');
    const t = table(HOSTILE, [HOSTILE], [['<b>cell</b>']], HOSTILE);
    expect(t).toContain('<td data-label="&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&amp;"><b>cell</b></td>');
    expect(table('t', ['h'], [], HOSTILE)).not.toContain('<script>');
  });
});
