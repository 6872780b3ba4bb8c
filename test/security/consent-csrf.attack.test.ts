import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CookieJar } from 'tough-cookie';
import { authorizationUrl, frontChannel, pkcePair, registerClient, startAttackStack, type AttackStack } from './helpers/support.js';

/**
 * CSRF on the interactive login and consent pages (OAuth 2.1 §7.10 and RFC 6749 §10.12 —
 * the consent decision must come from the user, not a cross-site form; MCP security best
 * practices §Confused Deputy: consent must not be bypassable). DEV_AUTO_LOGIN is OFF here.
 */
describe('attack: CSRF on the AS login and consent forms', () => {
  let stack: AttackStack;
  let clientId: string;
  beforeAll(async () => {
    stack = await startAttackStack({ devAutoLogin: undefined });
    clientId = await registerClient(stack);
  });
  afterAll(async () => stack?.close());

  const formOf = (html: string) => ({
    action: /<form method="post" action="([^"]+)"/.exec(html)?.[1]?.replace(/&amp;/g, '&'),
    csrf: /name="csrf" value="([^"]+)"/.exec(html)?.[1],
  });

  async function post(jar: CookieJar, url: string, form: Record<string, string>, extraCookie?: string) {
    const cookie = [await jar.getCookieString(url), extraCookie].filter(Boolean).join('; ');
    const res = await fetch(url, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cookie && { cookie }) },
      body: new URLSearchParams(form).toString(),
    });
    for (const c of res.headers.getSetCookie()) await jar.setCookie(c, url, { ignoreError: true });
    return { status: res.status, location: res.headers.get('location'), body: await res.text() };
  }

  /** Starts a flow and stops on the login page; returns the jar, the form and its URL. */
  async function openLogin() {
    const jar = new CookieJar();
    const page = await frontChannel(stack.issuer, authorizationUrl(stack, { clientId, challenge: pkcePair().challenge }), jar);
    if (page.kind !== 'stopped' || page.status !== 200) throw new Error('expected the login page');
    const form = formOf(page.body);
    return { jar, form, url: new URL(form.action!, stack.issuer).href };
  }

  /** Logs in properly and stops on the consent page. */
  async function openConsent() {
    const { jar, form, url } = await openLogin();
    const login = await post(jar, url, { csrf: form.csrf!, action: 'login', username: 'demo', password: 'demo-password' });
    expect(login.status).toBe(303);
    const next = await frontChannel(stack.issuer, new URL(login.location!, url), jar);
    if (next.kind !== 'stopped' || next.status !== 200) throw new Error('expected the consent page');
    const consent = formOf(next.body);
    expect(next.body).toContain('value="approve"');
    return { jar, form: consent, url: new URL(consent.action!, stack.issuer).href };
  }

  it('the forms carry a CSRF token (double submit: hidden field + SameSite=Strict httpOnly cookie)', async () => {
    const { jar, form, url } = await openLogin();
    expect(form.csrf).toMatch(/^[A-Za-z0-9_-]{16,}$/);
    const cookies = await jar.getCookies(url);
    const csrfCookie = cookies.find((c) => c.value === form.csrf);
    expect(csrfCookie?.httpOnly).toBe(true);
    expect(csrfCookie?.sameSite).toBe('strict');
  });

  it('login CSRF: posting the login form without the token → 403, not signed in', async () => {
    const { jar, url } = await openLogin();
    const res = await post(jar, url, { action: 'login', username: 'demo', password: 'demo-password' });
    expect(res.status).toBe(403);
  });

  it('consent CSRF: approve without the token → 403, no code', async () => {
    const { jar, url } = await openConsent();
    const res = await post(jar, url, { action: 'approve' });
    expect(res.status).toBe(403);
    expect(res.location ?? '').not.toContain('code=');
  });

  it('consent CSRF: approve with a wrong token (or one from another browser session) → 403', async () => {
    const victim = await openConsent();
    const attacker = await openConsent();
    const res = await post(victim.jar, victim.url, { action: 'approve', csrf: attacker.form.csrf! });
    expect(res.status).toBe(403);
    const forged = await post(victim.jar, victim.url, { action: 'approve', csrf: 'A'.repeat(victim.form.csrf!.length) });
    expect(forged.status).toBe(403);
  });

  it('consent CSRF: the form token without the matching cookie (cross-site post: SameSite=Strict withheld it) → 403', async () => {
    const { form, url } = await openConsent();
    const res = await post(new CookieJar(), url, { action: 'approve', csrf: form.csrf! });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
  });

  it('and with the right token the same consent succeeds (the refusals above are about CSRF only)', async () => {
    const { jar, form, url } = await openConsent();
    const res = await post(jar, url, { action: 'approve', csrf: form.csrf! });
    expect(res.status).toBe(303);
    const end = await frontChannel(stack.issuer, new URL(res.location!, url), jar);
    expect(end.kind).toBe('callback');
    expect((end as { url: URL }).url.searchParams.get('code')).toBeTruthy();
  });

  it('clickjacking: login and consent pages forbid framing (CSP frame-ancestors / X-Frame-Options)', async () => {
    const jar = new CookieJar();
    const page = await frontChannel(stack.issuer, authorizationUrl(stack, { clientId, challenge: pkcePair().challenge }), jar);
    expect(page.kind).toBe('stopped');
    const res = await fetch((page as { url: URL }).url, {
      headers: { cookie: await jar.getCookieString((page as { url: URL }).url.href) },
    });
    const csp = res.headers.get('content-security-policy') ?? '';
    const xfo = res.headers.get('x-frame-options') ?? '';
    expect(/frame-ancestors 'none'/.test(csp) || /deny/i.test(xfo)).toBe(true);
    await res.arrayBuffer();
  });

  describe('confused deputy: consent is per client (MCP security best practices §Confused Deputy)', () => {
    /** Logs the browser in and approves consent for `client`; returns the browser's jar. */
    async function signInAndApprove(client: string, jar = new CookieJar()) {
      let page = await frontChannel(stack.issuer, authorizationUrl(stack, { clientId: client, challenge: pkcePair().challenge }), jar);
      for (let step = 0; step < 3 && page.kind === 'stopped'; step++) {
        const form = formOf(page.body);
        const url = new URL(form.action!, stack.issuer).href;
        const fields: Record<string, string> = page.body.includes('value="approve"')
          ? { csrf: form.csrf!, action: 'approve' }
          : { csrf: form.csrf!, action: 'login', username: 'demo', password: 'demo-password' };
        const res = await post(jar, url, fields);
        page = await frontChannel(stack.issuer, new URL(res.location!, url), jar);
      }
      expect(page.kind).toBe('callback');
      return jar;
    }

    it('a second client using the same signed-in browser with prompt=none gets consent_required (or login_required), never a code', async () => {
      const jar = await signInAndApprove(clientId);
      const attacker = await registerClient(stack);
      const silent = await frontChannel(
        stack.issuer,
        authorizationUrl(stack, { clientId: attacker, challenge: pkcePair().challenge, extra: { prompt: 'none' } }),
        jar,
      );
      expect(silent.kind).toBe('callback');
      const params = (silent as { url: URL }).url.searchParams;
      expect(params.get('code')).toBeNull();
      expect(['consent_required', 'interaction_required', 'login_required']).toContain(params.get('error'));
    });

    it('without prompt=none the second client is shown the consent page (not auto-approved)', async () => {
      const jar = await signInAndApprove(clientId);
      const attacker = await registerClient(stack);
      const page = await frontChannel(stack.issuer, authorizationUrl(stack, { clientId: attacker, challenge: pkcePair().challenge }), jar);
      expect(page.kind).toBe('stopped');
      expect((page as { body: string }).body).toContain('value="approve"');
    });

    it('RFC 8252 §8.6: even the approved public (native) client is not silently re-approved — prompt=none, same or wider scope → no code', async () => {
      const jar = await signInAndApprove(clientId);
      for (const scope of ['notes:read', 'notes:read notes:write']) {
        const silent = await frontChannel(
          stack.issuer,
          authorizationUrl(stack, { clientId, challenge: pkcePair().challenge, scope, extra: { prompt: 'none' } }),
          jar,
        );
        expect(silent.kind).toBe('callback');
        expect((silent as { url: URL }).url.searchParams.get('code'), scope).toBeNull();
      }
    });
  });
});
