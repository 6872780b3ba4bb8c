/**
 * Behind a TLS-terminating proxy: the issuer is https, the AS sees plain http on loopback with
 * X-Forwarded-Proto / X-Forwarded-Host. The "proxy" here is the user agent rewriting the origin.
 */
import { describe, expect, it } from 'vitest';
import { REDIRECT, registerClient, type RunningAs } from './helpers/as.js';
import { codeAuthorizeUrl } from './helpers/flow.js';
import { HeadlessBrowser, isUrl, pkcePair } from '@mcp-auth-kit/test-utils';
import { startAsForDescribe } from './helpers/for-describe.js';

const PUBLIC = 'https://auth.example.com';

class ProxiedAgent extends HeadlessBrowser {
  constructor(private readonly backend: string) {
    super();
  }
  // Requests to the public origin go to the backend with the proxy's headers; the browser keeps
  // its cookies under the public origin, as a real one would.
  protected override send(url: URL, init: RequestInit): Promise<Response> {
    if (url.origin !== PUBLIC) return super.send(url, init);
    const headers = new Headers(init.headers);
    headers.set('x-forwarded-proto', 'https');
    headers.set('x-forwarded-host', 'auth.example.com');
    return fetch(url.href.replace(PUBLIC, this.backend), { ...init, headers, redirect: 'manual' });
  }
}

describe('behind a TLS-terminating proxy (trustProxy)', () => {
  let t: RunningAs;
  startAsForDescribe({ issuer: PUBLIC, trustProxy: true } as never, (started) => (t = started));

  it('metadata names the https issuer; the login flow works with Secure cookies', async () => {
    const m = (await (
      await fetch(`${t.url}/.well-known/oauth-authorization-server`, {
        headers: { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'auth.example.com' },
      })
    ).json()) as Record<string, string>;
    expect(m.issuer).toBe(PUBLIC);
    expect(m.authorization_endpoint).toBe(`${PUBLIC}/auth`);

    const clientId = (await registerClient(t.url)).body.client_id;
    const ua = new ProxiedAgent(t.url);
    const { challenge } = pkcePair();
    const login = await ua.follow(codeAuthorizeUrl(PUBLIC, challenge, { client_id: clientId }), REDIRECT);
    if (isUrl(login)) throw new Error('expected the login page');
    expect(login.status).toBe(200);
    const setCookies = login.headers.getSetCookie().join('\n');
    expect(setCookies).toMatch(/secure/i);
    const consent = await ua.submit(login, { username: 'alice', password: 'alice-password', action: 'login' }, REDIRECT);
    if (isUrl(consent)) throw new Error('expected consent');
    const done = await ua.submit(consent, { action: 'approve' }, REDIRECT);
    expect(isUrl(done) && done.searchParams.get('iss')).toBe(PUBLIC);
  });
});
