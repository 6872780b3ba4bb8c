/**
 * The loopback callback page (RFC 8252 §7.3 listener): says what happened — signed in, access
 * denied (RFC 6749 §4.1.2.1 `access_denied`), or an error with the AS's escaped description —
 * and that the window can be closed; styled by one inline stylesheet allowed by its hash, no
 * script. The listener's rules stay: a wrong `state` is answered 400 and ignored.
 */
import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { startLoopbackListener, type LoopbackListener } from '../src/core.js';

const ISSUER = 'https://as.example';
let listener: LoopbackListener | undefined;
afterEach(async () => {
  await listener?.close();
  listener = undefined;
});

async function callback(query: Record<string, string>, wait: { state: string; issuer?: string } = { state: 's1', issuer: ISSUER }) {
  listener = await startLoopbackListener();
  const waiting = listener.waitForCallback(wait);
  const res = await fetch(`${listener.redirectUri}?${new URLSearchParams(query)}`);
  const html = await res.text();
  return { res, html, received: await waiting };
}

const text = (html: string) =>
  html
    .replace(/<style>[\s\S]*?<\/style>/, '')
    .replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();

describe('loopback callback page', () => {
  it('a code: "Signed in", the window can be closed; styled by a hash-allowed inline stylesheet, no script', async () => {
    const { res, html, received } = await callback({ code: 'c', state: 's1', iss: ISSUER });
    expect(res.status).toBe(200);
    expect(received.searchParams.get('code')).toBe('c');
    expect(text(html)).toContain('Signed in');
    expect(text(html)).toContain('You can close this window and return to the application.');
    expect(html).not.toMatch(/<script|\son\w+=/i);
    const style = /<style>([\s\S]*?)<\/style>/.exec(html)?.[1] ?? '';
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain(`style-src 'sha256-${createHash('sha256').update(style).digest('base64')}'`);
    expect(csp).not.toContain('unsafe-inline');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
  });

  it('RFC 6749 §4.1.2.1 access_denied (Deny / Cancel): "Access denied", not "signed in"', async () => {
    const { html } = await callback({ error: 'access_denied', error_description: 'The user denied the request', state: 's1', iss: ISSUER });
    expect(text(html)).toContain('Access denied');
    expect(text(html)).toContain('the application did not get access');
    expect(text(html)).not.toContain('Signed in');
  });

  it('another error: the code and the escaped error_description of the expected issuer (RFC 9207 iss)', async () => {
    const { html } = await callback({
      error: 'invalid_scope',
      error_description: '<img src=x onerror=alert(1)> bad scope',
      state: 's1',
      iss: ISSUER,
    });
    expect(text(html)).toContain('Sign-in failed');
    expect(html).toContain('<code>invalid_scope</code>');
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt; bad scope');
    expect(html).not.toContain('<img');
  });

  it('mix-up (RFC 9207): an error from another iss, or without iss, is shown without its description', async () => {
    const other = await callback({
      error: 'server_error',
      error_description: 'Call +1 555 0100 to unlock your account',
      state: 's1',
      iss: 'https://evil.example',
    });
    expect(text(other.html)).toContain('Sign-in failed');
    expect(other.html).not.toContain('555 0100');
    await listener?.close();
    const none = await callback({ error: 'server_error', error_description: 'Call +1 555 0100', state: 's1' });
    expect(none.html).not.toContain('555 0100');
    await listener?.close();
    const noIssuer = await callback(
      { error: 'server_error', error_description: 'Call +1 555 0100', state: 's1', iss: ISSUER },
      { state: 's1' },
    );
    expect(noIssuer.html).not.toContain('555 0100');
  });

  it('RFC 6749 §10.12: a wrong state gets "Response ignored" (400) and the wait goes on to the right one', async () => {
    listener = await startLoopbackListener();
    const waiting = listener.waitForCallback({ state: 'right', issuer: ISSUER });
    const forged = await fetch(`${listener.redirectUri}?${new URLSearchParams({ error: 'access_denied', state: 'wrong' })}`);
    expect(forged.status).toBe(400);
    expect(text(await forged.text())).toContain('Response ignored');
    const real = await fetch(`${listener.redirectUri}?${new URLSearchParams({ code: 'c', state: 'right' })}`);
    expect(real.status).toBe(200);
    expect((await waiting).searchParams.get('code')).toBe('c');
  });
});
