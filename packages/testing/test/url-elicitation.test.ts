/**
 * completeUrlElicitation: the headless driver of a URL-mode elicitation's connect flow (issue 41),
 * against the kit's provider and a stand-in of our AS's connect pages as the contract fixes them
 * (test/helpers/connect-stand-in.ts). Each failure the driver reports is provoked for real.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  completeUrlElicitation,
  ConnectFlowError,
  startThirdPartyProvider,
  type CompleteUrlElicitationOptions,
  type ThirdPartyProvider,
} from '@mcp-auth-kit/testing';
import { nextOnAuthorizationServer, nextOnProvider } from '../src/third-party/connect-pages.js';
import { startConnectStandIn, type ConnectStandIn } from './helpers/connect-stand-in.js';

async function failure(run: Promise<unknown>): Promise<ConnectFlowError> {
  const err = await run.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConnectFlowError);
  return err as ConnectFlowError;
}

describe('completeUrlElicitation', () => {
  let provider: ThirdPartyProvider;
  let as: ConnectStandIn;
  const alice: CompleteUrlElicitationOptions = {
    authServer: { username: 'alice', password: 'alice-pw' },
    provider: { username: 'alice-drive', password: 'drive-pw' },
  };

  beforeAll(async () => {
    provider = await startThirdPartyProvider({
      users: [
        { username: 'alice-drive', password: 'drive-pw', files: [{ name: 'q3.xlsx' }] },
        { username: 'bob-drive', password: 'bob-drive-pw' },
      ],
    });
    as = await startConnectStandIn(provider, { alice: 'alice-pw', bob: 'bob-pw' });
  });
  afterAll(async () => {
    await as?.close();
    await provider?.close();
  });

  it("signs in at the AS, confirms, signs in and consents at the provider, and ends on the AS's connected page", async () => {
    const seen: string[] = [];
    const result = await completeUrlElicitation(as.connectUrl('alice'), {
      ...alice,
      fetch: (input, init) => {
        seen.push(`${init?.method ?? 'GET'} ${new URL(String(input)).pathname}`);
        return fetch(input, init);
      },
    });
    expect(result.finalUrl).toMatch(new RegExp(`^${as.issuer}/connect/callback\\?`));
    expect(result.text).toContain('Your Drive account is connected');
    // The user's own browser went through both servers' pages (the fetch option carried every request).
    expect(seen).toEqual([
      expect.stringMatching(/^GET \/connect\//),
      'POST /login',
      expect.stringMatching(/^GET \/connect\//),
      expect.stringMatching(/^POST \/connect\//),
      'GET /authorize',
      'POST /authorize/form',
      'POST /authorize/form',
      'GET /connect/callback',
    ]);
    // The AS holds alice's connection, made with the provider account that consented.
    const stored = as.connections.get('alice')!;
    const files = await fetch(`${provider.apiBase}/files`, { headers: { authorization: `Bearer ${stored.access_token}` } });
    expect(await files.json()).toEqual({ files: [{ id: 'f1', name: 'q3.xlsx', size: 0 }] });
    expect(provider.grants('alice-drive')).toEqual([{ username: 'alice-drive', clientId: 'our-as', scopes: ['files.read'] }]);
  });

  it('a used link: link_expired (HTTP 404), nothing connected again', async () => {
    const url = as.connectUrl('bob');
    await completeUrlElicitation(url, {
      authServer: { username: 'bob', password: 'bob-pw' },
      provider: { username: 'bob-drive', password: 'bob-drive-pw' },
    });
    const err = await failure(
      completeUrlElicitation(url, {
        authServer: { username: 'bob', password: 'bob-pw' },
        provider: { username: 'bob-drive', password: 'bob-drive-pw' },
      }),
    );
    expect(err.code).toBe('link_expired');
    expect(err.status).toBe(404);
    expect(err.message).toMatch(
      /expired, already used, or never issued \(HTTP 404 at http:\/\/127\.0\.0\.1:\d+\/connect\/[\w-]+\): This link expired/,
    );
  });

  it('an expired link: link_expired', async () => {
    const err = await failure(completeUrlElicitation(as.connectUrl('alice', 0), alice));
    expect(err.code).toBe('link_expired');
  });

  it("another user's link: wrong_user (HTTP 403) after the sign-in, and the provider is never reached", async () => {
    const before = provider.requests.length;
    const err = await failure(completeUrlElicitation(as.connectUrl('bob'), alice));
    expect(err.code).toBe('wrong_user');
    expect(err.message).toContain('refused the link for alice: it was made for another user');
    expect(provider.requests.length).toBe(before);
  });

  it('a wrong AS password: login_failed', async () => {
    const err = await failure(
      completeUrlElicitation(as.connectUrl('alice'), { ...alice, authServer: { username: 'alice', password: 'nope' } }),
    );
    expect(err.code).toBe('login_failed');
    expect(err.status).toBe(401);
    expect(err.message).toContain('did not accept the sign-in as alice');
  });

  it('a wrong provider password: provider_login_failed, and no grant at the provider', async () => {
    const grants = provider.grants().length;
    const err = await failure(
      completeUrlElicitation(as.connectUrl('alice'), { ...alice, provider: { username: 'alice-drive', password: 'nope' } }),
    );
    expect(err.code).toBe('provider_login_failed');
    expect(err.message).toContain('Invalid username or password.');
    expect(provider.grants().length).toBe(grants);
  });

  it('the provider refusing the request (redirect URI no longer registered): provider_refused', async () => {
    const registered = provider.registerClient({ clientId: 'our-as', redirectUris: ['http://127.0.0.1:1/elsewhere'] });
    try {
      const err = await failure(completeUrlElicitation(as.connectUrl('alice'), alice));
      expect(err.code).toBe('provider_refused');
      expect(err.status).toBe(400);
    } finally {
      provider.registerClient({ ...registered, redirectUris: [`${as.issuer}/connect/callback`] });
    }
  });

  it.each(['http://example.com/connect/x', 'http://10.0.0.1/connect/x', 'javascript:alert(1)', 'file:///etc/passwd', 'not a url'])(
    'opens only https or loopback http URLs: %s is unsafe_url, with no request made',
    async (url) => {
      const err = await failure(
        completeUrlElicitation(url, {
          ...alice,
          fetch: () => {
            throw new Error('no request may be made');
          },
        }),
      );
      expect(err.code).toBe('unsafe_url');
    },
  );
});

describe('connect pages as the driver reads them', () => {
  const page = (status: number, body: string, url = 'http://127.0.0.1:1/x') => ({ url, status, headers: new Headers(), body });
  const me = { username: 'u', password: 'p' };

  it('finds the AS login form after other forms (an upstream sign-in offered first)', () => {
    const step = nextOnAuthorizationServer(
      page(
        200,
        `<form method="post" action="/u"><button name="upstream" value="0">Sign in with IdP</button></form>
<form method="post" action="/login"><input type="hidden" name="csrf" value="c"><input name="username"><input type="password" name="password">
<button type="submit" name="action" value="login">Sign in</button></form>`,
      ),
      me,
    );
    expect(step).toMatchObject({
      kind: 'submit',
      form: { action: '/login' },
      fields: { username: 'u', password: 'p', action: 'login' },
      login: 'as',
    });
  });

  it('the confirmation: the connect button with its value; a final page that says "not connected" is not a success', () => {
    const confirm = nextOnAuthorizationServer(
      page(
        200,
        '<form method="post" action="/c"><input type="hidden" name="csrf" value="c"><button name="action" value="connect">Connect</button></form>',
      ),
      me,
    );
    expect(confirm).toMatchObject({ kind: 'submit', fields: { action: 'connect' } });
    expect(nextOnAuthorizationServer(page(200, '<p>Your account is not connected.</p>'), me)).toMatchObject({
      kind: 'stop',
      code: 'not_connected',
    });
    expect(nextOnAuthorizationServer(page(200, '<p>Drive &amp; co connected.</p>'), me)).toEqual({
      kind: 'connected',
      text: 'Drive & co connected.',
    });
    expect(nextOnAuthorizationServer(page(400, '<p>Bad state.</p>'), me)).toMatchObject({ kind: 'stop', code: 'connect_refused' });
    expect(nextOnAuthorizationServer(page(410, '<p>Gone.</p>'), me)).toMatchObject({ kind: 'stop', code: 'link_expired' });
  });

  it('on the provider: sign-in, then consent; anything else is provider_refused', () => {
    expect(nextOnProvider(page(200, '<form action="/f"><input type="password" name="password"></form>'), me)).toMatchObject({
      fields: { username: 'u', password: 'p', action: 'signin' },
      login: 'provider',
    });
    expect(nextOnProvider(page(200, '<form action="/f"><button name="action" value="approve">Allow</button></form>'), me)).toMatchObject({
      fields: { action: 'approve' },
    });
    expect(nextOnProvider(page(403, '<form action="/f"><button name="action" value="approve">Allow</button></form>'), me)).toMatchObject({
      kind: 'stop',
      code: 'provider_refused',
    });
  });
});
