// Enterprise-managed authorization, client side (spec/extensions/auth-enterprise-managed-
// authorization.mdx §For MCP clients 2-3): SSO at the enterprise IdP (OIDC code flow with PKCE and
// nonce, OIDC Core §3.1.3.7 ID Token checks, RFC 9207 iss), then ID Token → ID-JAG → access token.
import { decodeJwt } from 'jose';
import { describe, expect, it } from 'vitest';
import { enterpriseManagedAssertion, enterpriseSignIn, ERR, McpAuthClient } from '../src/index.js';
import { fakePairs } from './helpers/fake-pair.js';
import { IDP_CLIENT_ID, IDP_CLIENT_SECRET, startFakeIdp, type FakeIdp } from './helpers/fake-idp.js';

const { pair, cleanups } = fakePairs();

async function idp(): Promise<FakeIdp> {
  const i = await startFakeIdp();
  cleanups.push(i);
  return i;
}

const browser =
  (seen: URL[] = []) =>
  async (url: URL) => {
    seen.push(url);
    await fetch(url, { redirect: 'follow' });
  };

describe('enterpriseSignIn()', () => {
  it('signs in with code + PKCE S256 + nonce and returns the ID Token, its subject and the IdP token endpoint', async () => {
    const i = await idp();
    const seen: URL[] = [];
    const s = await enterpriseSignIn({
      idpIssuer: i.issuer,
      idpClientId: IDP_CLIENT_ID,
      idpClientSecret: IDP_CLIENT_SECRET,
      openAuthorizationUrl: browser(seen),
    });
    expect(s).toMatchObject({
      idToken: i.idTokens[0],
      issuer: i.issuer,
      subject: 'alice@corp.example',
      tokenEndpoint: `${i.issuer}/token`,
    });
    const q = seen[0]!.searchParams;
    expect(q.get('code_challenge_method')).toBe('S256');
    expect(q.get('scope')).toBe('openid');
    expect(q.get('nonce')).toMatch(/.{20,}/);
    expect(new URL(q.get('redirect_uri')!).hostname).toBe('127.0.0.1');
  });

  it('refuses an authorization response from another issuer (RFC 9207) without redeeming the code', async () => {
    const i = await idp();
    const other = await idp();
    const forged = async (url: URL) => {
      const target = new URL(url.searchParams.get('redirect_uri')!);
      target.searchParams.set('code', 'stolen');
      target.searchParams.set('state', url.searchParams.get('state')!);
      target.searchParams.set('iss', other.issuer);
      await fetch(target);
    };
    await expect(
      enterpriseSignIn({
        idpIssuer: i.issuer,
        idpClientId: IDP_CLIENT_ID,
        idpClientSecret: IDP_CLIENT_SECRET,
        openAuthorizationUrl: forged,
      }),
    ).rejects.toMatchObject({ code: ERR.AUTHORIZATION_RESPONSE_INVALID });
    expect(i.tokenRequests).toHaveLength(0);
  });

  it('a refused code exchange (wrong client secret) carries the IdP error code', async () => {
    const i = await idp();
    await expect(
      enterpriseSignIn({ idpIssuer: i.issuer, idpClientId: IDP_CLIENT_ID, idpClientSecret: 'wrong', openAuthorizationUrl: browser() }),
    ).rejects.toMatchObject({ code: ERR.TOKEN_REQUEST_FAILED, error: 'invalid_client' });
  });
});

describe('enterpriseSignIn() refuses an ID Token that is not for this sign-in (OIDC Core §3.1.3.7)', () => {
  for (const [what, tamper] of [
    ['another nonce (a replayed or injected ID Token)', { nonce: 'not-the-one-sent' }],
    ['another audience (an ID Token for another client)', { aud: 'some-other-client' }],
    ['another issuer', { iss: 'https://evil.example' }],
    ['an expired one', { exp: Math.floor(Date.now() / 1000) - 3600 }],
  ] as const) {
    it(`${what}: refused, no ID Token returned`, async () => {
      const i = await idp();
      i.tamper = tamper;
      await expect(
        enterpriseSignIn({
          idpIssuer: i.issuer,
          idpClientId: IDP_CLIENT_ID,
          idpClientSecret: IDP_CLIENT_SECRET,
          openAuthorizationUrl: browser(),
        }),
      ).rejects.toMatchObject({ code: ERR.TOKEN_REQUEST_FAILED });
    });
  }
});

describe('SSO → ID-JAG → MCP access token', () => {
  it('the ID Token from the sign-in is exchanged for an ID-JAG (audience = MCP AS issuer), then redeemed at the MCP AS', async () => {
    const i = await idp();
    const [as, rs] = await pair();
    const signIn = () =>
      enterpriseSignIn({
        idpIssuer: i.issuer,
        idpClientId: IDP_CLIENT_ID,
        idpClientSecret: IDP_CLIENT_SECRET,
        openAuthorizationUrl: browser(),
      });
    const c = new McpAuthClient({
      clientName: 'ema',
      jwtBearer: {
        client_id: 'mcp-client',
        issuer: as.issuer,
        assertion: enterpriseManagedAssertion({
          idpTokenEndpoint: `${i.issuer}/token`,
          idpClientId: IDP_CLIENT_ID,
          idpClientSecret: IDP_CLIENT_SECRET,
          idToken: async () => (await signIn()).idToken,
        }),
      },
    });
    expect((await c.fetch(rs.mcpUrl)).status).toBe(200);
    const exchange = i.tokenRequests[1]!.body;
    expect(exchange.get('subject_token')).toBe(i.idTokens[0]);
    expect(exchange.get('audience')).toBe(as.issuer);
    expect(decodeJwt(as.tokenRequests[0]!.body.get('assertion')!)).toMatchObject({ iss: i.issuer, aud: as.issuer, resource: rs.mcpUrl });
    // "Do not redirect the user to the MCP Authorization Server's authorization endpoint"
    expect(as.authorizations).toHaveLength(0);
  });
});
