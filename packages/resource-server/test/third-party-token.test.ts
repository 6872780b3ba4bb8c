import { inspect } from 'node:util';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from '@mcp-auth-kit/protocol';
import { configProblemsOf, rejectionOf, thrownBy } from '@mcp-auth-kit/test-utils';
import {
  createResourceServer,
  thirdPartyToken,
  ThirdPartyAuthorizationRequiredError,
  ThirdPartyTokenError,
  type McpAuthInfo,
  type ResourceServer,
  type ResourceServerOptions,
} from '../src/index.js';
import { createThirdPartyTokens } from '../src/core.js';
import { connectUri, processExchangeResponse, tokenEndpointProblem } from '../src/third-party/exchange.js';
import { RESOURCE, signToken } from './helpers/harness.js';
import { ACCESS_TOKEN_TYPE, FakeExchangeIssuer, MCP_CLIENT, thirdPartyServer, TOKEN_EXCHANGE } from './helpers/third-party.js';

// RFC 8693 token exchange from the resource server (issue 41, RS side), against a fake of our
// AS's token endpoint built to the contract (helpers/third-party.ts).

const { id: CLIENT_ID, secret: CLIENT_SECRET } = MCP_CLIENT;
const OTHER_RESOURCE = 'http://localhost:4000/mcp';

let as: FakeExchangeIssuer;
let rs: ResourceServer;
let clock: number;
let logs: Array<{ message: string; details?: Record<string, unknown> }>;

function server(extra: Partial<ResourceServerOptions> = {}): ResourceServer {
  const record = (message: string, details?: Record<string, unknown>) => {
    logs.push({ message, ...(details !== undefined ? { details } : {}) });
  };
  return thirdPartyServer(as, record, { now: () => clock, ...extra });
}

/** `req.auth` as the middleware sets it for an MCP access token of `sub`. */
async function authInfoFor(sub: string, claims: Record<string, unknown> = {}, on: ResourceServer = rs): Promise<McpAuthInfo> {
  const token = await signToken({ key: as.keys[0]!, issuer: as.issuer, claims: { sub, ...claims }, now: Math.floor(clock / 1000) });
  return on.core.toAuthInfo(await on.verifyAccessToken(token));
}

const refusal = (promise: Promise<unknown>): Promise<ThirdPartyTokenError> => rejectionOf(promise, ThirdPartyTokenError);

/** Everything an error could show (message, JSON, inspection with its cause): none of `secrets` may be in it. */
function expectNoSecrets(value: unknown, secrets: string[]): void {
  const shown = [String(value), JSON.stringify(value), inspect(value, { depth: 5, showHidden: true })].join('\n');
  for (const secret of secrets) expect(shown).not.toContain(secret);
}

beforeAll(async () => {
  as = await FakeExchangeIssuer.create();
  as.providers.set('calendar', { resources: [OTHER_RESOURCE] });
});
afterAll(async () => {
  await as.stop();
});
beforeEach(() => {
  clock = Date.now();
  logs = [];
  rs = server();
});
afterEach(async () => {
  await rs.close();
  // a request a test stopped waiting for (timeout, cancel) still lands: not in the next test's records
  await as.settled();
  as.exchanges.length = 0;
  as.connections.clear();
  as.answer = undefined;
  as.delayMs = 0;
  as.expiresIn = 3600;
});

describe('thirdPartyToken: RFC 8693 token exchange at the AS', () => {
  it('sends the MCP token as subject_token, the provider as audience, authenticated as the confidential client (RFC 8693 §2.1, RFC 6749 §2.3.1)', async () => {
    const providerToken = as.connect('user-a', 'drive');
    const auth = await authInfoFor('user-a');
    await expect(thirdPartyToken(auth, 'drive')).resolves.toBe(providerToken);
    expect(as.exchanges).toHaveLength(1);
    const [exchange] = as.exchanges;
    expect(exchange!.form).toEqual({
      grant_type: TOKEN_EXCHANGE,
      subject_token: auth.token,
      subject_token_type: ACCESS_TOKEN_TYPE,
      audience: 'drive',
    });
    expect(exchange!.authorization).toBe(`Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64')}`);
  });

  it('client_secret_post puts the credentials in the body instead', async () => {
    await rs.close();
    rs = server({ thirdParty: { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, authMethod: 'client_secret_post' } });
    const providerToken = as.connect('user-a', 'drive');
    await expect(thirdPartyToken(await authInfoFor('user-a'), 'drive')).resolves.toBe(providerToken);
    expect(as.exchanges[0]!.authorization).toBeUndefined();
    expect(as.exchanges[0]!.form).toMatchObject({ client_id: CLIENT_ID, client_secret: CLIENT_SECRET });
  });

  it('finds the configuration through a copy of req.auth (apps and SDK transports copy it)', async () => {
    const providerToken = as.connect('user-a', 'drive');
    const auth = await authInfoFor('user-a');
    await expect(thirdPartyToken({ ...auth, extra: { ...auth.extra } }, 'drive')).resolves.toBe(providerToken);
  });

  it('caches per (MCP token, provider) until shortly before expires_in, and never past the MCP token', async () => {
    as.expiresIn = 120;
    const first = as.connect('user-a', 'drive');
    const auth = await authInfoFor('user-a', { exp: Math.floor(clock / 1000) + 3600 });
    await expect(thirdPartyToken(auth, 'drive')).resolves.toBe(first);
    clock += 89_000;
    await expect(thirdPartyToken(auth, 'drive')).resolves.toBe(first);
    expect(as.exchanges).toHaveLength(1);
    // 30 s before the provider token's expiry it is asked for again
    clock += 2_000;
    const second = as.connect('user-a', 'drive');
    await expect(thirdPartyToken(auth, 'drive')).resolves.toBe(second);
    expect(as.exchanges).toHaveLength(2);

    // a short-lived provider token is kept for half its life at most
    as.expiresIn = 10;
    const shortLived = await authInfoFor('user-a', { jti: 'short' });
    await thirdPartyToken(shortLived, 'drive');
    clock += 5_000;
    await thirdPartyToken(shortLived, 'drive');
    expect(as.exchanges).toHaveLength(4);

    // an MCP token that expires first ends the entry
    as.expiresIn = 3600;
    const expiring = await authInfoFor('user-a', { jti: 'expiring', exp: Math.floor(clock / 1000) + 60 });
    await thirdPartyToken(expiring, 'drive');
    clock += 61_000;
    await thirdPartyToken(expiring, 'drive');
    expect(as.exchanges).toHaveLength(6);
  });

  it('without expires_in nothing is cached; bypassCache asks again; cache: false turns the cache off', async () => {
    as.connect('user-a', 'drive');
    const auth = await authInfoFor('user-a');
    await thirdPartyToken(auth, 'drive');
    await thirdPartyToken(auth, 'drive', { bypassCache: true });
    expect(as.exchanges).toHaveLength(2);
    as.expiresIn = undefined;
    const other = await authInfoFor('user-a', { jti: 'no-expiry' });
    await thirdPartyToken(other, 'drive');
    await thirdPartyToken(other, 'drive');
    expect(as.exchanges).toHaveLength(4);
    await rs.close();
    rs = server({ thirdParty: { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, cache: false } });
    as.expiresIn = 3600;
    const uncached = await authInfoFor('user-a');
    await thirdPartyToken(uncached, 'drive');
    await thirdPartyToken(uncached, 'drive');
    expect(as.exchanges).toHaveLength(6);
  });

  it('concurrent calls for one (token, provider) share one exchange', async () => {
    const providerToken = as.connect('user-a', 'drive');
    as.delayMs = 50;
    const auth = await authInfoFor('user-a');
    const answers = await Promise.all([thirdPartyToken(auth, 'drive'), thirdPartyToken(auth, 'drive'), thirdPartyToken(auth, 'drive')]);
    expect(answers).toEqual([providerToken, providerToken, providerToken]);
    expect(as.exchanges).toHaveLength(1);
  });

  it('the cache is per user: user B never gets user A’s provider token, even concurrently', async () => {
    const tokenA = as.connect('user-a', 'drive');
    const tokenB = as.connect('user-b', 'drive');
    as.delayMs = 30;
    const [a, b] = await Promise.all([authInfoFor('user-a'), authInfoFor('user-b')]);
    const [gotA, gotB] = await Promise.all([thirdPartyToken(a, 'drive'), thirdPartyToken(b, 'drive')]);
    expect([gotA, gotB]).toEqual([tokenA, tokenB]);
    // warm cache: each user still gets their own
    await expect(thirdPartyToken(b, 'drive')).resolves.toBe(tokenB);
    await expect(thirdPartyToken(a, 'drive')).resolves.toBe(tokenA);
    // user B not connected: the AS is asked (no fallback to anyone's cached token)
    as.disconnect('user-b', 'drive');
    const b2 = await authInfoFor('user-b', { jti: 'b2' });
    await expect(thirdPartyToken(b2, 'drive')).rejects.toBeInstanceOf(ThirdPartyAuthorizationRequiredError);
  });

  it('not connected: interaction_required becomes ThirdPartyAuthorizationRequiredError with the connect URL; once connected the next call succeeds', async () => {
    const auth = await authInfoFor('user-a');
    const err = (await refusal(thirdPartyToken(auth, 'drive'))) as ThirdPartyAuthorizationRequiredError;
    expect(err).toBeInstanceOf(ThirdPartyAuthorizationRequiredError);
    expect(err).toMatchObject({
      code: 'interaction_required',
      provider: 'drive',
      providerDisplayName: 'Drive',
      expiresIn: 600,
      status: 400,
      message: 'Connect your Drive account to continue',
    });
    expect(err.url).toMatch(new RegExp(`^${as.issuer}/connect/[A-Za-z0-9_-]+$`));
    expect(err.elicitationId).toMatch(/^[0-9a-f-]{36}$/);
    // the user completes the flow at the AS
    expect((await fetch(err.url)).status).toBe(200);
    await expect(thirdPartyToken(auth, 'drive')).resolves.toBe(as.connections.get('user-a')!.get('drive'));
    // not connected is a normal step: logged at debug level, without the token
    expect(logs.find((l) => l.details?.code === 'interaction_required')).toMatchObject({
      details: { provider: 'drive', code: 'interaction_required', status: 400 },
    });
  });

  it('the provider’s name shown is display-safe, falling back to its short name', () => {
    const answer = (extra: Record<string, unknown>) => {
      try {
        processExchangeResponse(
          400,
          { error: 'interaction_required', connect_uri: `${as.issuer}/connect/x`, ...extra },
          { issuer: as.issuer, provider: 'drive' },
        );
      } catch (err) {
        return (err as ThirdPartyAuthorizationRequiredError).message;
      }
      throw new Error('no refusal');
    };
    expect(answer({})).toBe('Connect your drive account to continue');
    expect(answer({ provider_display_name: 'Evil\u202E\nDrive\u0007' })).toBe('Connect your Evil Drive account to continue');
    expect(answer({ provider_display_name: 42 })).toBe('Connect your drive account to continue');
  });
});

describe('thirdPartyToken: refusals (no token in any error or log)', () => {
  const cases: Array<{ name: string; code: string; setup: () => Promise<McpAuthInfo> }> = [
    {
      name: 'unknown provider → invalid_target',
      code: 'invalid_target',
      setup: async () => authInfoFor('user-a'),
    },
    {
      name: 'a provider only another resource may use → invalid_target',
      code: 'invalid_target',
      setup: async () => authInfoFor('user-a'),
    },
    {
      name: 'MCP token issued for another resource → invalid_grant',
      code: 'invalid_grant',
      setup: async () => {
        const auth = await authInfoFor('user-a');
        const other = await signToken({ key: as.keys[0]!, issuer: as.issuer, claims: { sub: 'user-a', aud: OTHER_RESOURCE } });
        return { ...auth, token: other };
      },
    },
    {
      name: 'revoked MCP token (grant not live) → invalid_grant',
      code: 'invalid_grant',
      setup: async () => {
        as.revoked.add('revoked-jti');
        return authInfoFor('user-a', { jti: 'revoked-jti' });
      },
    },
  ];
  const providerFor = (name: string) =>
    name.startsWith('unknown') ? 'photos' : name.includes('another resource may use') ? 'calendar' : 'drive';

  for (const { name, code, setup } of cases) {
    it(name, async () => {
      as.connect('user-a', 'drive');
      as.connect('user-a', 'calendar');
      const auth = await setup();
      const err = await refusal(thirdPartyToken(auth, providerFor(name)));
      expect(err.code).toBe(code);
      expect(err.status).toBe(400);
      expectNoSecrets(err, [auth.token, CLIENT_SECRET, ...as.connections.get('user-a')!.values()]);
      expectNoSecrets(logs, [auth.token, CLIENT_SECRET, ...as.connections.get('user-a')!.values()]);
      expect(logs.at(-1)).toMatchObject({ details: { code, provider: providerFor(name) } });
    });
  }

  it('wrong client secret → invalid_client; a client without resource → unauthorized_client', async () => {
    await rs.close();
    rs = server({ thirdParty: { clientId: CLIENT_ID, clientSecret: 'wrong' } });
    const auth = await authInfoFor('user-a');
    const err = await refusal(thirdPartyToken(auth, 'drive'));
    expect(err).toMatchObject({ code: 'invalid_client', status: 401 });
    expect(err.message).toContain("refused this MCP server's client credentials");
    expectNoSecrets(err, [auth.token, 'wrong']);

    as.clients.set('no-resource', { secret: 's' });
    await rs.close();
    rs = server({ thirdParty: { clientId: 'no-resource', clientSecret: 's' } });
    expect((await refusal(thirdPartyToken(await authInfoFor('user-a'), 'drive'))).code).toBe('unauthorized_client');
  });

  it('an MCP token of another issuer is never sent anywhere (not_configured, no request)', async () => {
    const auth = await authInfoFor('user-a');
    const err = await refusal(thirdPartyToken({ ...auth, extra: { ...auth.extra, iss: 'https://other-as.example' } }, 'drive'));
    expect(err.code).toBe('not_configured');
    expect(as.exchanges).toHaveLength(0);
  });

  it('no configuration for this request → not_configured; a bad provider name or auth info → TypeError', async () => {
    const plain = createResourceServer({ resource: RESOURCE, authorizationServers: [as.issuer] });
    try {
      const auth = await authInfoFor('user-a', {}, plain);
      expect((await refusal(thirdPartyToken(auth, 'drive'))).code).toBe('not_configured');
      expect((await refusal(thirdPartyToken(undefined, 'drive'))).code).toBe('not_configured');
    } finally {
      await plain.close();
    }
    const auth = await authInfoFor('user-a');
    await expect(thirdPartyToken(auth, 'drive/../x')).rejects.toBeInstanceOf(TypeError);
    await expect(thirdPartyToken({ ...auth, token: 'a b\r\n' }, 'drive')).rejects.toBeInstanceOf(TypeError);
    expect(as.exchanges).toHaveLength(0);
  });

  it('AS unavailable (500, HTML, timeout, closed port) → temporarily_unavailable; an unusable 200 → invalid_response', async () => {
    const auth = await authInfoFor('user-a');
    as.answer = () => ({ status: 500, body: { error: 'server_error' } });
    expect((await refusal(thirdPartyToken(auth, 'drive'))).code).toBe('temporarily_unavailable');
    as.answer = () => ({ status: 502, body: '<html>bad gateway</html>', contentType: 'text/html' });
    expect((await refusal(thirdPartyToken(auth, 'drive'))).code).toBe('temporarily_unavailable');
    as.answer = () => ({ status: 200, body: 'access_token=x', contentType: 'text/plain' });
    expect((await refusal(thirdPartyToken(auth, 'drive'))).code).toBe('invalid_response');
    as.answer = () => ({ status: 200, body: { access_token: 'x\r\nSet-Cookie: a=b', token_type: 'Bearer' } });
    expect((await refusal(thirdPartyToken(auth, 'drive'))).code).toBe('invalid_response');
    as.answer = () => ({ status: 200, body: { access_token: 'abc', token_type: 'N_A', issued_token_type: ACCESS_TOKEN_TYPE } });
    expect((await refusal(thirdPartyToken(auth, 'drive'))).code).toBe('invalid_response');
    as.answer = () => ({
      status: 200,
      body: { access_token: 'abc', token_type: 'Bearer', issued_token_type: 'urn:ietf:params:oauth:token-type:id_token' },
    });
    expect((await refusal(thirdPartyToken(auth, 'drive'))).code).toBe('invalid_response');
    as.answer = undefined;

    await rs.close();
    rs = server({ thirdParty: { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, timeoutMs: 100 } });
    as.delayMs = 1_000;
    const slow = await authInfoFor('user-a');
    const timedOut = await refusal(thirdPartyToken(slow, 'drive'));
    expect(timedOut.code).toBe('temporarily_unavailable');
    expectNoSecrets(timedOut, [slow.token, CLIENT_SECRET]);
    as.delayMs = 0;

    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    await rs.close();
    rs = server({ thirdParty: { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, tokenEndpoint: `http://127.0.0.1:${port}/token` } });
    const down = await authInfoFor('user-a');
    const refused = await refusal(thirdPartyToken(down, 'drive'));
    expect(refused.code).toBe('temporarily_unavailable');
    expectNoSecrets(refused, [down.token, CLIENT_SECRET]);
  });

  it('a connect URL that is not on the AS’s origin, or an answer about another provider, is refused (invalid_response)', async () => {
    const auth = await authInfoFor('user-a');
    as.answer = () => ({ status: 400, body: { error: 'interaction_required', connect_uri: 'https://phish.example/connect/x' } });
    expect((await refusal(thirdPartyToken(auth, 'drive'))).code).toBe('invalid_response');
    as.answer = () => ({
      status: 400,
      body: { error: 'interaction_required', connect_uri: `${as.issuer}/connect/x`, provider: 'calendar' },
    });
    expect((await refusal(thirdPartyToken(auth, 'drive'))).code).toBe('invalid_response');
    expect(connectUri(`${as.issuer}/connect/abc`, as.issuer)).toBe(`${as.issuer}/connect/abc`);
    for (const bad of [
      'javascript:alert(1)',
      `${as.issuer.replace('http://', 'http://user:pw@')}/connect/x`,
      'http://as.example/connect/x',
      `${as.issuer}/connect/x#frag`,
      `${as.issuer}/${'x'.repeat(3000)}`,
      42,
    ]) {
      expect(connectUri(bad, as.issuer), String(bad)).toBeUndefined();
    }
    expect(connectUri('http://as.example/connect/x', 'http://as.example')).toBeUndefined();
    expect(connectUri('https://as.example/connect/x', 'https://as.example')).toBe('https://as.example/connect/x');
  });

  it('the token endpoint must be https (or http on loopback): the MCP token and the secret go there', async () => {
    expect(tokenEndpointProblem('https://as.example/token')).toBeUndefined();
    expect(tokenEndpointProblem('http://127.0.0.1:9000/token')).toBeUndefined();
    expect(tokenEndpointProblem('http://as.example/token')).toBe('is not https (or http on loopback)');
    expect(tokenEndpointProblem('https://u:p@as.example/token')).toBe('has user information');
    expect(tokenEndpointProblem('not a url')).toBe('is not a URL');
    // from metadata: not used, and nothing is sent
    as.advertiseTokenEndpoint = false;
    try {
      const err = await refusal(thirdPartyToken(await authInfoFor('user-a'), 'drive'));
      expect(err.code).toBe('invalid_response');
      expect(as.exchanges).toHaveLength(0);
    } finally {
      as.advertiseTokenEndpoint = true;
    }
  });

  it('a cancelled tool call stops waiting with its own reason', async () => {
    as.connect('user-a', 'drive');
    as.delayMs = 200;
    const providerToken = as.connections.get('user-a')!.get('drive');
    const auth = await authInfoFor('user-a');
    const controller = new AbortController();
    const pending = thirdPartyToken(auth, 'drive', { signal: controller.signal });
    controller.abort(new Error('cancelled by the client'));
    await expect(pending).rejects.toThrow('cancelled by the client');
    // the exchange goes on for another caller of the same (token, provider)
    await expect(thirdPartyToken(auth, 'drive')).resolves.toBe(providerToken);
    expect(as.exchanges).toHaveLength(1);
    await expect(thirdPartyToken(await authInfoFor('user-a'), 'drive', { signal: controller.signal })).rejects.toThrow(
      'cancelled by the client',
    );
  });
});

describe('configuration', () => {
  it('bad thirdParty options are listed in one ConfigError', () => {
    const attempt = () =>
      createResourceServer({
        resource: RESOURCE,
        authorizationServers: ['http://127.0.0.1:9000'],
        thirdParty: {
          clientId: '',
          clientSecret: 7 as unknown as string,
          authMethod: 'private_key_jwt' as 'client_secret_post',
          tokenEndpoint: 'http://as.example/token',
          timeoutMs: 0,
          expirySkewSeconds: -1,
        },
      });
    expect(thrownBy(attempt)).toBeInstanceOf(ConfigError);
    expect(configProblemsOf(attempt)).toEqual([
      'thirdParty.clientId must be a non-empty string',
      'thirdParty.clientSecret must be a non-empty string',
      'thirdParty.authMethod must be client_secret_basic or client_secret_post',
      'thirdParty.timeoutMs must be a number between 1 and 60000',
      'thirdParty.expirySkewSeconds must be a number between 0 and 3600',
      'thirdParty.tokenEndpoint is not https (or http on loopback)',
    ]);
  });

  it('createThirdPartyTokens: the same exchanges without the middleware (@mcp-auth-kit/resource-server/core)', async () => {
    expect(() => createThirdPartyTokens({ issuer: 'not a url', clientId: 'a', clientSecret: 'b' })).toThrow(ConfigError);
    const providerToken = as.connect('user-a', 'drive');
    const auth = await authInfoFor('user-a');
    const metadataFetches = as.hits.metadata;
    const tokens = createThirdPartyTokens({ issuer: as.issuer, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET });
    // an auth info from any middleware: the token and (optionally) its issuer
    const foreign: McpAuthInfo = { token: auth.token, clientId: 'c', scopes: [] };
    await expect(tokens.token(foreign, 'drive')).resolves.toBe(providerToken);
    await expect(thirdPartyToken(foreign, 'drive', { tokens })).resolves.toBe(providerToken);
    expect(as.exchanges).toHaveLength(1);
    // the token endpoint comes from the metadata, fetched once
    tokens.clear();
    await tokens.token(foreign, 'drive');
    expect(as.exchanges).toHaveLength(2);
    expect(as.hits.metadata).toBe(metadataFetches + 1);
  });
});
