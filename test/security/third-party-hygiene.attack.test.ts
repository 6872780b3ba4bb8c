import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pinoLogger } from '@mcp-auth-kit/authorization-server';
import { startAttackStack, type AttackStack } from './helpers/support.js';
import { PROVIDER_CLIENT_SECRET, startFakeProvider, type FakeProvider } from './helpers/third-party-provider.js';
import {
  ALICE,
  ALICE_DRIVE,
  VAULT_CLIENT,
  VAULT_MCP,
  completeConnect,
  connectUntilCallback,
  exchange,
  mcpAccessToken,
  twoUserVaultOptions,
} from './helpers/third-party-flow.js';

/**
 * Issue 41: third-party tokens never appear in logs, audit lines or error descriptions, and the
 * MCP access token is never sent to the third party (MCP security best practices §Token
 * Passthrough: the MCP server's token stays between the MCP client, the MCP server and its AS).
 * The AS runs with its default logger (pino JSON lines at debug level, captured) through connect,
 * exchange, refresh, a refused refresh, replays, a mix-up attempt and a disconnect; then no token,
 * code, state, ticket, secret or key may appear in a captured line, and the provider's record of
 * every request it received holds no MCP access token.
 */
describe('attack: third-party tokens in logs and answers, the MCP token at the third party', () => {
  const KEY = Buffer.alloc(32, 9).toString('base64url');
  const captured: string[] = [];
  const secrets = new Set<string>([KEY, PROVIDER_CLIENT_SECRET, VAULT_CLIENT.secret]);
  const mcpTokens: string[] = [];
  let provider: FakeProvider;
  let stack: AttackStack;

  beforeAll(async () => {
    provider = await startFakeProvider([{ ...ALICE_DRIVE, files: ['alice.txt'] }]);
    const options = twoUserVaultOptions(provider);
    const destination = { write: (line: string) => void captured.push(line) };
    stack = await startAttackStack({
      ...options,
      quiet: false,
      logger: pinoLogger({ level: 'debug', name: 'auth-server', destination }),
      authorizationServer: {
        ...options.authorizationServer,
        thirdParty: { ...options.authorizationServer.thirdParty, encryptionKey: KEY },
      },
    });
    provider.redirectUri = `${stack.issuer}/connect/callback`;
  });
  afterAll(async () => {
    await stack?.close();
    await provider?.close();
  });

  /** Remembers the secrets of a connect: the ticket, and the code and state of the callback. */
  function remember(connectUri: string, callback?: URL) {
    secrets.add(connectUri.slice(connectUri.lastIndexOf('/') + 1));
    for (const name of ['code', 'state']) {
      const value = callback?.searchParams.get(name);
      if (value) secrets.add(value);
    }
  }

  it('connect, exchange, refresh, refused refresh, replays, mix-up and disconnect leave no secret in any log line or answer', async () => {
    const alice = await mcpAccessToken(stack.issuer, ALICE, VAULT_MCP);
    mcpTokens.push(alice.accessToken);
    const answers: string[] = [];
    const ask = async () => {
      const res = await exchange(stack.issuer, VAULT_CLIENT, alice.accessToken);
      answers.push(res.status === 200 ? JSON.stringify({ ...res.body, access_token: undefined }) : res.text);
      return res;
    };
    // connect (the callback kept, then replayed); tokens that expire within the refresh margin
    provider.expiresIn = 5;
    const first = await ask();
    const connectUri = String(first.body.connect_uri);
    const callback = await connectUntilCallback(connectUri, alice.ua, { providerUser: ALICE_DRIVE });
    remember(connectUri, callback);
    expect(((await alice.ua.follow(callback, () => false)) as { body: string }).body).toContain('Drive is connected');
    await alice.ua.follow(callback, () => false);
    // exchange with a refresh (the token expires within the margin), then a refused refresh
    expect((await ask()).status).toBe(200);
    provider.revokeAll();
    const again = await ask();
    expect(again.body.error).toBe('interaction_required');
    // a mix-up attempt (wrong iss), then a good connect, then a disconnect on the account page
    provider.iss = 'wrong';
    const mixUri = String(again.body.connect_uri);
    const mixCallback = await connectUntilCallback(mixUri, alice.ua, { providerUser: ALICE_DRIVE });
    remember(mixUri, mixCallback);
    await alice.ua.follow(mixCallback, () => false);
    provider.iss = 'right';
    provider.expiresIn = 3600;
    const third = await ask();
    remember(String(third.body.connect_uri));
    await completeConnect(String(third.body.connect_uri), alice.ua, { providerUser: ALICE_DRIVE, provider });
    expect((await ask()).status).toBe(200);
    const page = await alice.ua.request(`${stack.issuer}/account`);
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.body)![1]!;
    await alice.ua.request(`${stack.issuer}/account`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf, action: 'disconnect', provider: 'drive' }),
    });
    expect((await ask()).body.error).toBe('interaction_required');
    // refusals that name the tokens they refuse
    answers.push((await exchange(stack.issuer, VAULT_CLIENT, provider.issued[0]!)).text);
    answers.push((await exchange(stack.issuer, VAULT_CLIENT, alice.accessToken, 'calendar')).text);

    for (const t of [...provider.issued, ...mcpTokens]) secrets.add(t);
    const log = captured.join('\n');
    // the capture is not empty: every kind of line was written
    for (const event of ['third_party.connected', 'third_party.token_exchanged', 'third_party.disconnected', 'third_party.refused'])
      expect(log, event).toContain(`"audit":"${event}"`);
    expect(log).toMatch(/"path":"\/connect\/:ticket"/);
    const leaked = [...secrets].filter((s) => log.includes(s));
    expect(leaked, 'secrets in the AS log').toEqual([]);
    // answers: no provider token in an error description or any refusal; the 200s were stripped of their access_token above
    const inAnswers = [...provider.issued].filter((t) => answers.some((a) => a.includes(t)));
    expect(inAnswers, 'provider tokens in refusals').toEqual([]);
  });

  it('the MCP access token never reaches the third party (no request the provider received carries it)', async () => {
    expect(provider.requests.length).toBeGreaterThan(5);
    const seen = provider.requests.map((r) => JSON.stringify(r));
    for (const token of mcpTokens) expect(seen.filter((r) => r.includes(token))).toEqual([]);
    // nor does any other credential of ours: the MCP server's secret, the vault key
    expect(seen.filter((r) => r.includes(VAULT_CLIENT.secret) || r.includes(KEY))).toEqual([]);
  });
});
