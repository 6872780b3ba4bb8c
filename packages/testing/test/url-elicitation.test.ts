/**
 * completeUrlElicitation: the headless driver of a URL-mode elicitation's connect flow (issue 41),
 * against our real authorization server's connect pages (the kit's test AS with its token vault
 * on) and the kit's provider. The connect URL comes from the AS's RFC 8693 answer
 * `interaction_required`, as an MCP server receives it. Each failure the driver reports is
 * provoked for real.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { completeUrlElicitation, ConnectFlowError, type CompleteUrlElicitationOptions } from '@mcp-auth-kit/testing';
import { nextOnAuthorizationServer, nextOnProvider } from '../src/third-party/connect-pages.js';
import { RESOURCE, startVaultStack, type VaultStack } from './helpers/vault-stack.js';

async function failure(run: Promise<unknown>): Promise<ConnectFlowError> {
  const err = await run.catch((e: unknown) => e);
  expect(err).toBeInstanceOf(ConnectFlowError);
  return err as ConnectFlowError;
}

describe('completeUrlElicitation against our authorization server', () => {
  let stack: VaultStack;
  const alice: CompleteUrlElicitationOptions = {
    authServer: { username: 'alice', password: 'alice-password-1' },
    provider: { username: 'alice-drive', password: 'drive-pw' },
  };
  const bob: CompleteUrlElicitationOptions = {
    authServer: { username: 'bob', password: 'bob-password-1' },
    provider: { username: 'bob-drive', password: 'bob-drive-pw' },
  };

  beforeAll(async () => {
    stack = await startVaultStack(
      [
        { username: 'alice', password: 'alice-password-1' },
        { username: 'bob', password: 'bob-password-1' },
      ],
      {
        users: [
          { username: 'alice-drive', password: 'drive-pw', files: [{ name: 'q3.xlsx' }] },
          { username: 'bob-drive', password: 'bob-drive-pw' },
        ],
      },
    );
  });
  afterAll(() => stack?.close());

  /** A fresh connect URL for the user (their connection removed first), and their MCP token. */
  async function connectUrl(username: string) {
    const account = await stack.as.store.accounts.findByUsername(username);
    if (account) await stack.as.store.connections.deleteAccount(account.id);
    const mcpToken = await stack.as.issueAccessToken({ resource: RESOURCE, subject: username });
    const answer = await stack.exchange(mcpToken);
    expect(answer.body.error).toBe('interaction_required');
    return { mcpToken, url: String(answer.body.connect_uri) };
  }

  it("signs in at the AS, confirms, signs in and consents at the provider, ends on the AS's connected page; the exchange then answers", async () => {
    const { mcpToken, url } = await connectUrl('alice');
    const seen: string[] = [];
    const result = await completeUrlElicitation(url, {
      ...alice,
      fetch: (input, init) => {
        seen.push(`${init?.method ?? 'GET'} ${new URL(String(input)).pathname}`);
        return fetch(input, init);
      },
    });
    expect(result.finalUrl).toMatch(new RegExp(`^${stack.as.issuer}/connect/callback\\?`));
    expect(result.text).toContain('Your Drive account is connected');
    // Every request went through the fetch option: our AS's pages, its login, the provider's pages.
    expect(seen[0]).toMatch(/^GET \/connect\/[\w-]+$/);
    expect(seen).toContain('POST /authorize/form');
    expect(seen.at(-1)).toBe('GET /connect/callback');

    const exchanged = await stack.exchange(mcpToken);
    expect(exchanged.status).toBe(200);
    const files = await fetch(`${stack.drive.apiBase}/files`, { headers: { authorization: `Bearer ${exchanged.body.access_token}` } });
    expect(await files.json()).toEqual({ files: [{ id: 'f1', name: 'q3.xlsx', size: 0 }] });
    expect(stack.drive.grants('alice-drive')).toEqual([{ username: 'alice-drive', clientId: 'mcp-auth-kit', scopes: ['files.read'] }]);
    // The MCP access token never reached the third party.
    expect(stack.drive.requestsContaining(mcpToken)).toEqual([]);
  });

  it('a used link: link_expired, and the message does not show the ticket', async () => {
    const { url } = await connectUrl('bob');
    await completeUrlElicitation(url, bob);
    const err = await failure(completeUrlElicitation(url, bob));
    expect(err.code).toBe('link_expired');
    expect(err.status).toBe(400);
    expect(err.message).toMatch(
      /expired, already used, or never issued \(HTTP 400 at http:\/\/127\.0\.0\.1:\d+\/connect\/…\): Link expired/,
    );
    expect(err.message).not.toContain(new URL(url).pathname);
  });

  it("another user's link: wrong_user (HTTP 403) after the sign-in; the provider is never reached and nothing is linked", async () => {
    const { url, mcpToken } = await connectUrl('bob');
    const before = stack.drive.requests.length;
    const err = await failure(completeUrlElicitation(url, alice));
    expect(err.code).toBe('wrong_user');
    expect(err.status).toBe(403);
    expect(err.message).toContain('refused the link for alice: it was made for another user');
    expect(stack.drive.requests.length).toBe(before);
    expect((await stack.exchange(mcpToken)).body.error).toBe('interaction_required');
    // The link was not used up: its owner still connects with it.
    await completeUrlElicitation(url, bob);
    expect((await stack.exchange(mcpToken)).status).toBe(200);
  });

  it('a wrong AS password: login_failed (401)', async () => {
    const { url } = await connectUrl('alice');
    const err = await failure(completeUrlElicitation(url, { ...alice, authServer: { username: 'alice', password: 'nope' } }));
    expect(err.code).toBe('login_failed');
    expect(err.status).toBe(401);
    expect(err.message).toContain('did not accept the sign-in as alice');
  });

  it('a wrong provider password: provider_login_failed, and no new grant at the provider', async () => {
    const { url } = await connectUrl('alice');
    const grants = stack.drive.grants().length;
    const err = await failure(completeUrlElicitation(url, { ...alice, provider: { username: 'alice-drive', password: 'nope' } }));
    expect(err.code).toBe('provider_login_failed');
    expect(err.message).toContain('Invalid username or password.');
    expect(stack.drive.grants().length).toBe(grants);
  });

  it('the provider refusing the request (our callback no longer registered): provider_refused', async () => {
    const { url } = await connectUrl('alice');
    const registered = stack.drive.registerClient({ clientId: 'mcp-auth-kit', redirectUris: ['http://127.0.0.1:1/elsewhere'] });
    try {
      const err = await failure(completeUrlElicitation(url, alice));
      expect(err.code).toBe('provider_refused');
      expect(err.status).toBe(400);
    } finally {
      stack.drive.registerClient({ ...registered, redirectUris: [`${stack.as.issuer}/connect/callback`] });
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

  it('the confirmation is answered with action=connect (never cancel); the ends of the flow by their pages', () => {
    const confirm = nextOnAuthorizationServer(
      page(
        200,
        '<form method="post" action="/c"><input type="hidden" name="csrf" value="c"><button name="action" value="connect">Connect</button><button name="action" value="cancel">Cancel</button></form>',
      ),
      me,
    );
    expect(confirm).toMatchObject({ kind: 'submit', fields: { action: 'connect' } });
    expect(
      nextOnAuthorizationServer(page(200, '<h1>Drive is connected</h1><p>Your Drive &amp; co account is connected.</p>'), me),
    ).toMatchObject({
      kind: 'connected',
      text: 'Drive is connected Your Drive & co account is connected.',
    });
    expect(nextOnAuthorizationServer(page(200, '<h1>Not connected</h1><p>Nothing was connected.</p>'), me)).toMatchObject({
      kind: 'stop',
      code: 'not_connected',
    });
    expect(nextOnAuthorizationServer(page(400, '<h1>Link expired</h1><p>…</p>'), me)).toMatchObject({ kind: 'stop', code: 'link_expired' });
    expect(nextOnAuthorizationServer(page(502, '<h1>Not connected</h1>'), me)).toMatchObject({ kind: 'stop', code: 'connect_refused' });
    // 403 is wrong_user only with the offer to switch accounts (an expired form is 403 too).
    expect(
      nextOnAuthorizationServer(
        page(403, '<form method="post" action="/c"><button name="action" value="switch">Switch</button></form>'),
        me,
      ),
    ).toMatchObject({ code: 'wrong_user' });
    expect(nextOnAuthorizationServer(page(403, '<h1>Form expired</h1>'), me)).toMatchObject({ code: 'connect_refused' });
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
