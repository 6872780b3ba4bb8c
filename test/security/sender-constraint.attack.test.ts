import { beforeAll, describe, expect, it } from 'vitest';
import { startTestIdp } from '@mcp-auth-kit/testing';
import { SignJWT, decodeJwt, exportJWK, generateKeyPair, type JWK } from 'jose';
import {
  NATIVE_REDIRECT,
  authorizeCode,
  dpopKey,
  dpopPostProof,
  pkcePair,
  postForm,
  postJson,
  registerClient,
  useAttackStack,
} from './helpers/support.js';
import { sharedForSuite } from '../helpers/suite.js';
import { advertisedGrantInventory, authorizationServerSources, expectListedGrantRegistrations } from './helpers/grant-types.js';
import type { DpopKey, JsonResponse } from './helpers/support.js';
import { JWT_BEARER, secretClient } from '../helpers/clients.js';
import {
  completeConnect,
  exchange,
  TOKEN_EXCHANGE,
  useDemoDrive,
  VAULT_CLIENT,
  VAULT_MCP,
  vaultStackOptions,
  withVault,
} from './helpers/third-party-flow.js';
import { HeadlessBrowser } from '@mcp-auth-kit/test-utils';
import { ConfigError } from '@mcp-auth-kit/protocol';
import { validateConfig } from '@mcp-auth-kit/authorization-server/ops';

/**
 * Sender constraint survives every grant (RFC 9449). For each grant type the AS advertises
 * (RFC 8414 `grant_types_supported`), one table says what happens to a DPoP binding:
 *
 * - `carry`: a binding on the access token carries to what the grant hands out for later use —
 *   a refresh token bound to the key where RFC 9449 §5 binds it (public clients, natively in
 *   oidc-provider) or where the authorization grant itself demands the key (an ID-JAG's
 *   `cnf.jkt`, draft-ietf-oauth-identity-assertion-authz-grant §8.6.2), so that a refresh without
 *   the proof, or with another key, is refused; or no refresh token at all (nothing to carry).
 * - `enforce`: a client registered with `dpop_bound_access_tokens: true` never gets a token
 *   without a proof (RFC 9449 §5.2: the AS "MUST reject token requests from the client that do
 *   not contain the DPoP header").
 *
 * The token exchange (RFC 8693, third-party tokens) hands out a provider's token, which this
 * server cannot bind: its rule is that a subject token bound to the MCP client's key is accepted
 * from the MCP server that authenticates as the token's audience (which verified the proof and
 * cannot make one), a DPoP proof at the exchange is refused (never a Bearer answer the caller
 * would take for bound), and no `dpop_bound_access_tokens` client can use it.
 *
 * The enumeration guard at the end fails when the AS advertises a grant type without both kinds
 * of row: a grant added later cannot ship without its sender-constraint tests.
 */
const SECRET = 'sender-constraint-secret-0123456789';

const confidential = (client_id: string, grant_types: string[], extra: Record<string, unknown> = {}) =>
  secretClient(client_id, SECRET, grant_types, extra);

let machineKey: Awaited<ReturnType<typeof generateKeyPair>>;
let machineJwk: JWK;
/** A configured client that signs its own assertions with `machineKey` (private_key_jwt, jwks). */
const keyedMachine = (client_id: string, extra: Record<string, unknown> = {}) => ({
  client_id,
  grant_types: [JWT_BEARER],
  response_types: [],
  redirect_uris: [],
  token_endpoint_auth_method: 'private_key_jwt',
  jwks: { keys: [machineJwk] },
  scope: 'notes:read',
  ...extra,
});

interface Row {
  grant: string;
  kind: 'carry' | 'enforce';
  name: string;
  run(): Promise<void>;
}

describe('attack: a sender-constrained (DPoP) token loses its binding through a grant (RFC 9449 §5, §5.2)', () => {
  const idp = sharedForSuite(startTestIdp);
  const provider = useDemoDrive(['a.txt']);

  beforeAll(async () => {
    machineKey = await generateKeyPair('ES256');
    machineJwk = { ...(await exportJWK(machineKey.publicKey)), kid: 'machine-key', alg: 'ES256' };
  });
  const stack = useAttackStack(() =>
    withVault(provider, {
      authorizationServer: {
        clients: [
          confidential('agent', [JWT_BEARER, 'refresh_token']),
          confidential('bound-agent', [JWT_BEARER, 'refresh_token'], { dpop_bound_access_tokens: true }),
          confidential('other-agent', [JWT_BEARER, 'refresh_token']),
          confidential('machine', ['client_credentials'], { scope: 'notes:read' }),
          confidential('bound-machine', ['client_credentials'], { scope: 'notes:read', dpop_bound_access_tokens: true }),
          // the client's own assertion (RFC 7523 §2.1, MCP client credentials), authenticated by it
          keyedMachine('asserting-machine'),
          keyedMachine('bound-asserting-machine', { dpop_bound_access_tokens: true }),
        ],
        idJag: {
          refreshTokens: true,
          trustedIdps: [{ name: 'Acme IdP', issuer: idp.issuer, jwksUri: idp.jwksUri, clients: ['agent', 'bound-agent'] }],
        },
      },
    }),
  );
  beforeAll(() => {
    provider.redirectUri = `${stack.issuer}/connect/callback`;
  });

  const proof = (key: DpopKey) => dpopPostProof(key, stack.metadata.token_endpoint);

  /** A token request; `client` as a public client id or a confidential client (Basic auth). */
  const tokenRequest = async (params: Record<string, string>, client: string | { id: string }, key?: DpopKey): Promise<JsonResponse> =>
    postForm(stack.metadata.token_endpoint, typeof client === 'string' ? { ...params, client_id: client } : params, {
      ...(typeof client !== 'string' && { authorization: `Basic ${Buffer.from(`${client.id}:${SECRET}`).toString('base64')}` }),
      ...(key && { dpop: await proof(key) }),
    });

  const refresh = (refreshToken: string, client: string | { id: string }, key?: DpopKey) =>
    tokenRequest({ grant_type: 'refresh_token', refresh_token: refreshToken, resource: stack.mcpUrl }, client, key);

  const boundTo = (res: JsonResponse, key: DpopKey) => {
    expect(res.status, res.text).toBe(200);
    expect(res.body.token_type).toBe('DPoP');
    expect(decodeJwt(String(res.body.access_token)).cnf).toEqual({ jkt: key.jkt });
  };

  const refused = (res: JsonResponse, error: string) => {
    expect(res.status, res.text).toBe(400);
    expect(res.body.error, res.text).toBe(error);
    expect(res.body.access_token).toBeUndefined();
    expect(res.body.refresh_token).toBeUndefined();
  };

  /** Code flow of a public client (DCR); with `key`, the exchange carries a proof. */
  async function codeTokens(clientId: string, key?: DpopKey): Promise<JsonResponse> {
    const { verifier, challenge } = pkcePair();
    const code = (await authorizeCode(stack, { clientId, challenge })).get('code')!;
    return tokenRequest(
      { grant_type: 'authorization_code', code, redirect_uri: NATIVE_REDIRECT, code_verifier: verifier, resource: stack.mcpUrl },
      clientId,
      key,
    );
  }

  const idJag = (clientId: string, claims: Record<string, unknown> = {}) =>
    idp.idJag({ sub: 'U-sender', aud: stack.issuer, client_id: clientId, resource: stack.mcpUrl, scope: 'notes:read', ...claims });

  /** An ID-JAG bound to `key` (cnf.jkt), redeemed with a proof by it: a DPoP-bound pair. */
  async function boundIdJagTokens(key: DpopKey): Promise<JsonResponse> {
    const res = await tokenRequest(
      { grant_type: JWT_BEARER, assertion: await idJag('agent', { cnf: { jkt: key.jkt } }) },
      { id: 'agent' },
      key,
    );
    boundTo(res, key);
    expect(res.body.refresh_token).toBeTypeOf('string');
    return res;
  }

  /** A DPoP-bound MCP access token of the demo user for the vault's MCP server, the demo user connected to drive. */
  async function boundSubjectToken(key: DpopKey): Promise<string> {
    const client = await registerClient(stack);
    const { verifier, challenge } = pkcePair();
    const code = (await authorizeCode(stack, { clientId: client, challenge, resource: VAULT_MCP })).get('code')!;
    const tokens = await tokenRequest(
      { grant_type: 'authorization_code', code, redirect_uri: NATIVE_REDIRECT, code_verifier: verifier, resource: VAULT_MCP },
      client,
      key,
    );
    boundTo(tokens, key);
    const subject = String(tokens.body.access_token);
    const first = await exchange(stack.issuer, VAULT_CLIENT, subject);
    if (first.body.error === 'interaction_required') {
      const page = await completeConnect(String(first.body.connect_uri), new HeadlessBrowser(), {
        providerUser: { username: 'demo-drive', password: 'drive-pass' },
        provider,
      });
      expect(page.body).toContain('Drive is connected');
    }
    return subject;
  }

  /** The client-assertion variant of the JWT bearer grant: the client's own assertion alone. */
  const ownAssertion = async (client: string, key?: DpopKey) => {
    const now = Math.floor(Date.now() / 1000);
    const assertion = await new SignJWT({ iss: client, sub: client, aud: stack.issuer, jti: crypto.randomUUID(), iat: now, exp: now + 60 })
      .setProtectedHeader({ alg: 'ES256', kid: 'machine-key', typ: 'JWT' })
      .sign(machineKey.privateKey);
    return postForm(
      stack.metadata.token_endpoint,
      { grant_type: JWT_BEARER, assertion, scope: 'notes:read', resource: stack.mcpUrl },
      key ? { dpop: await proof(key) } : {},
    );
  };

  const clientCredentials = (client: string, key?: DpopKey) =>
    tokenRequest({ grant_type: 'client_credentials', scope: 'notes:read', resource: stack.mcpUrl }, { id: client }, key);

  const TABLE: Row[] = [
    // authorization_code: oidc-provider binds a public client's refresh token natively (RFC 9449 §5).
    {
      grant: 'authorization_code',
      kind: 'carry',
      name: "RFC 9449 §5: a public client's DPoP-bound code exchange gives a bound refresh token: refreshed without a proof → invalid_grant",
      async run() {
        const key = await dpopKey();
        const client = await registerClient(stack);
        const tokens = await codeTokens(client, key);
        boundTo(tokens, key);
        refused(await refresh(String(tokens.body.refresh_token), client), 'invalid_grant');
      },
    },
    {
      grant: 'authorization_code',
      kind: 'carry',
      name: "RFC 9449 §5: a public client's bound refresh token with another key's proof → invalid_grant; with its own key still bound",
      async run() {
        const key = await dpopKey();
        const client = await registerClient(stack);
        const tokens = await codeTokens(client, key);
        refused(await refresh(String(tokens.body.refresh_token), client, await dpopKey()), 'invalid_grant');
        boundTo(await refresh(String(tokens.body.refresh_token), client, key), key);
      },
    },
    {
      grant: 'authorization_code',
      kind: 'enforce',
      name: 'RFC 9449 §5.2: a dpop_bound_access_tokens client redeeming a code without a proof → refused (oidc-provider: invalid_grant)',
      async run() {
        const client = await registerClient(stack, { dpop_bound_access_tokens: true });
        refused(await codeTokens(client), 'invalid_grant');
        const key = await dpopKey();
        boundTo(await codeTokens(client, key), key);
      },
    },
    // refresh_token: the rotated refresh token keeps the binding of the one it replaces.
    {
      grant: 'refresh_token',
      kind: 'carry',
      name: 'RFC 9449 §5: the rotated refresh token of a bound one is bound too: without a proof or with another key → invalid_grant',
      async run() {
        const key = await dpopKey();
        const client = await registerClient(stack);
        const tokens = await codeTokens(client, key);
        const rotated = await refresh(String(tokens.body.refresh_token), client, key);
        boundTo(rotated, key);
        refused(await refresh(String(rotated.body.refresh_token), client), 'invalid_grant');
        refused(await refresh(String(rotated.body.refresh_token), client, await dpopKey()), 'invalid_grant');
      },
    },
    {
      grant: 'refresh_token',
      kind: 'enforce',
      name: 'RFC 9449 §5.2: a dpop_bound_access_tokens client refreshing without a proof → refused (oidc-provider: invalid_grant)',
      async run() {
        const key = await dpopKey();
        const client = await registerClient(stack, { dpop_bound_access_tokens: true });
        const tokens = await codeTokens(client, key);
        boundTo(tokens, key);
        refused(await refresh(String(tokens.body.refresh_token), client), 'invalid_grant');
      },
    },
    // client_credentials: no refresh token, so only the access token carries the key.
    {
      grant: 'client_credentials',
      kind: 'carry',
      name: 'RFC 6749 §4.4.3 / RFC 9449 §5: a DPoP-bound client credentials token comes without a refresh token (nothing to carry)',
      async run() {
        const key = await dpopKey();
        const res = await clientCredentials('machine', key);
        boundTo(res, key);
        expect(res.body.refresh_token).toBeUndefined();
      },
    },
    {
      grant: 'client_credentials',
      kind: 'enforce',
      name: 'RFC 9449 §5.2: a dpop_bound_access_tokens client without a proof → refused (oidc-provider: invalid_grant)',
      async run() {
        refused(await clientCredentials('bound-machine'), 'invalid_grant');
        const key = await dpopKey();
        boundTo(await clientCredentials('bound-machine', key), key);
      },
    },
    // jwt-bearer (ID-JAG): the grant is ours (grants/jwt-bearer/), so every rule is ours too.
    {
      grant: JWT_BEARER,
      kind: 'carry',
      name: 'draft §8.6.2 / RFC 9449 §5: an ID-JAG bound to a key (cnf.jkt): its refresh token refreshed without a proof → invalid_grant, never a Bearer token',
      async run() {
        const key = await dpopKey();
        const tokens = await boundIdJagTokens(key);
        refused(await refresh(String(tokens.body.refresh_token), { id: 'agent' }), 'invalid_grant');
      },
    },
    {
      grant: JWT_BEARER,
      kind: 'carry',
      name: "draft §8.6.2 / RFC 9449 §5: an ID-JAG bound to a key: its refresh token with another key's proof → invalid_grant, never a token bound to that key",
      async run() {
        const key = await dpopKey();
        const tokens = await boundIdJagTokens(key);
        refused(await refresh(String(tokens.body.refresh_token), { id: 'agent' }, await dpopKey()), 'invalid_grant');
        // The legitimate holder still refreshes, and the rotated token keeps the key.
        const rotated = await refresh(String(tokens.body.refresh_token), { id: 'agent' }, key);
        boundTo(rotated, key);
        refused(await refresh(String(rotated.body.refresh_token), { id: 'agent' }), 'invalid_grant');
      },
    },
    {
      grant: JWT_BEARER,
      kind: 'carry',
      name: 'refresh grace (refresh-grace.ts): a repeat of an ID-JAG refresh within the window keeps the binding; without the proof or with another key nothing is served',
      async run() {
        const key = await dpopKey();
        const tokens = await boundIdJagTokens(key);
        const first = await refresh(String(tokens.body.refresh_token), { id: 'agent' }, key);
        boundTo(first, key);
        const repeat = await refresh(String(tokens.body.refresh_token), { id: 'agent' }, key);
        boundTo(repeat, key);
        expect(repeat.body.access_token).toBe(first.body.access_token);
        expect(repeat.body.refresh_token).toBe(first.body.refresh_token);
        refused(await refresh(String(tokens.body.refresh_token), { id: 'agent' }), 'invalid_grant');
        refused(await refresh(String(tokens.body.refresh_token), { id: 'agent' }, await dpopKey()), 'invalid_grant');
        // Refused at the key check, before reuse detection: holding the token without the key is
        // not enough even to end the user's grant, and the holder's new pair stays usable.
        boundTo(await refresh(String(first.body.refresh_token), { id: 'agent' }, key), key);
      },
    },
    {
      grant: JWT_BEARER,
      kind: 'carry',
      name: "RFC 9449 §5: a confidential client's own key (an ID-JAG without cnf) leaves the refresh token bound by client authentication only",
      async run() {
        const key = await dpopKey();
        const res = await tokenRequest({ grant_type: JWT_BEARER, assertion: await idJag('agent') }, { id: 'agent' }, key);
        boundTo(res, key);
        // RFC 9449 §5: "Refresh tokens issued to confidential clients ... are not bound to the DPoP
        // proof public key": another client cannot use it; the client itself may change its key.
        refused(await refresh(String(res.body.refresh_token), { id: 'other-agent' }, await dpopKey()), 'invalid_grant');
        const other = await dpopKey();
        boundTo(await refresh(String(res.body.refresh_token), { id: 'agent' }, other), other);
      },
    },
    {
      grant: JWT_BEARER,
      kind: 'enforce',
      name: 'RFC 9449 §5.2: a dpop_bound_access_tokens client presenting an ID-JAG without a proof → invalid_dpop_proof, and the assertion stays unused',
      async run() {
        const assertion = await idJag('bound-agent');
        const res = await tokenRequest({ grant_type: JWT_BEARER, assertion }, { id: 'bound-agent' });
        refused(res, 'invalid_dpop_proof');
        expect(String(res.body.error_description)).toMatch(/dpop_bound_access_tokens/);
        // Refused before the assertion was verified: the corrected retry redeems the same one.
        const key = await dpopKey();
        const retry = await tokenRequest({ grant_type: JWT_BEARER, assertion }, { id: 'bound-agent' }, key);
        boundTo(retry, key);
      },
    },
    {
      grant: JWT_BEARER,
      kind: 'enforce',
      name: 'RFC 9449 §5.2: a dpop_bound_access_tokens client refreshing an ID-JAG refresh token without a proof → refused',
      async run() {
        const key = await dpopKey();
        const res = await tokenRequest({ grant_type: JWT_BEARER, assertion: await idJag('bound-agent') }, { id: 'bound-agent' }, key);
        boundTo(res, key);
        refused(await refresh(String(res.body.refresh_token), { id: 'bound-agent' }), 'invalid_grant');
      },
    },
    // jwt-bearer with the client's own assertion (grants/jwt-bearer/client-assertion-grant.ts): as client_credentials.
    {
      grant: JWT_BEARER,
      kind: 'carry',
      name: "RFC 7523 §2.1 / RFC 9449 §5: a DPoP-bound token for a client's own assertion comes without a refresh token (nothing to carry)",
      async run() {
        const key = await dpopKey();
        const res = await ownAssertion('asserting-machine', key);
        boundTo(res, key);
        expect(res.body.refresh_token).toBeUndefined();
      },
    },
    {
      grant: JWT_BEARER,
      kind: 'enforce',
      name: 'RFC 9449 §5.2: a dpop_bound_access_tokens client presenting its own assertion without a proof → invalid_dpop_proof',
      async run() {
        const res = await ownAssertion('bound-asserting-machine');
        refused(res, 'invalid_dpop_proof');
        const key = await dpopKey();
        boundTo(await ownAssertion('bound-asserting-machine', key), key);
      },
    },
    // token exchange (third-party tokens): the provider's token cannot carry our binding.
    {
      grant: TOKEN_EXCHANGE,
      kind: 'carry',
      name: "RFC 8693 + RFC 9449 §7.1: a DPoP-bound subject token is exchanged by the MCP server it was issued for (which checked the proof and authenticates); the answer is the provider's Bearer token with no refresh token (nothing to carry)",
      async run() {
        const subject = await boundSubjectToken(await dpopKey());
        const res = await exchange(stack.issuer, VAULT_CLIENT, subject);
        expect(res.status, res.text).toBe(200);
        expect(res.body.token_type).toBe('Bearer');
        expect(provider.issued).toContain(res.body.access_token);
        expect(res.body.refresh_token).toBeUndefined();
      },
    },
    {
      grant: TOKEN_EXCHANGE,
      kind: 'carry',
      name: 'RFC 9449 §5: a DPoP proof at the exchange is refused (invalid_request): never a Bearer answer the caller would take for a bound token',
      async run() {
        const key = await dpopKey();
        const subject = await boundSubjectToken(key);
        const res = await exchange(stack.issuer, VAULT_CLIENT, subject, 'drive', {}, { dpop: await proof(key) });
        refused(res, 'invalid_request');
        expect(String(res.body.error_description)).toMatch(/DPoP/);
      },
    },
    {
      grant: TOKEN_EXCHANGE,
      kind: 'enforce',
      name: 'RFC 9449 §5.2: a dpop_bound_access_tokens client never gets a token here: refused as an MCP server at start-up, unauthorized_client when registered (with or without a proof)',
      async run() {
        const start = () =>
          validateConfig({
            issuer: 'http://127.0.0.1:9000',
            resources: [{ resource: VAULT_MCP, scopes: { 'notes:read': 'Read' } }],
            storage: { kind: 'memory' },
            clients: [confidential('bound-mcp', [TOKEN_EXCHANGE], { resource: VAULT_MCP, dpop_bound_access_tokens: true })],
            thirdParty: vaultStackOptions(provider).thirdParty,
          });
        expect(start).toThrow(ConfigError);
        expect(start).toThrow(/not with dpop_bound_access_tokens/);
        const reg = await postJson(stack.metadata.registration_endpoint, {
          client_name: 'bound confidential',
          redirect_uris: [NATIVE_REDIRECT],
          grant_types: ['authorization_code'],
          response_types: ['code'],
          token_endpoint_auth_method: 'client_secret_basic',
          dpop_bound_access_tokens: true,
        });
        expect(reg.status, reg.text).toBe(201);
        const client = { id: String(reg.body.client_id), secret: String(reg.body.client_secret) };
        const key = await dpopKey();
        const subject = await boundSubjectToken(key);
        refused(await exchange(stack.issuer, client, subject), 'unauthorized_client');
        refused(await exchange(stack.issuer, client, subject, 'drive', {}, { dpop: await proof(key) }), 'unauthorized_client');
      },
    },
  ];

  it.each(TABLE.map((row) => [row.grant, row.name, row] as const))('%s: %s', async (_grant, _name, row) => {
    await row.run();
  });

  it('enumeration guard: every grant type the AS advertises (RFC 8414 grant_types_supported) has a carry row and an enforce row', async () => {
    // Every grant the kit has is on here (ID-JAG too): the list is the whole inventory.
    const advertised = await advertisedGrantInventory(stack.issuer);
    const missing = advertised.flatMap((grant) =>
      (['carry', 'enforce'] as const)
        .filter((kind) => !TABLE.some((r) => r.grant === grant && r.kind === kind))
        .map((kind) => `${grant}: ${kind}`),
    );
    expect(missing, 'grant types without a sender-constraint row in TABLE').toEqual([]);
    // A row for a grant the AS no longer advertises is stale.
    expect(TABLE.filter((r) => !advertised.includes(r.grant)).map((r) => r.grant)).toEqual([]);
  });

  it('enumeration guard: no grant is added in the AS sources that this stack would not turn on (registerGrantType, oidc-provider grant features)', () => {
    const sources = authorizationServerSources();
    expect(sources.some((f) => f.path === 'provider/provider.ts')).toBe(true);
    // A grant registered elsewhere, or one of oidc-provider's optional grants switched on, may be
    // off in this test's configuration and so missing from the discovery list above: give it its
    // rows, turn it on in the stack of this file, then list it here.
    expectListedGrantRegistrations();
    const optionalGrants = sources.filter((f) => /\b(?:deviceFlow|ciba|openid4vci)\s*:/.test(f.text)).map((f) => f.path);
    expect(optionalGrants).toEqual([]);
  });
});
