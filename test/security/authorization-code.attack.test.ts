import { beforeAll, describe, expect, it } from 'vitest';
import {
  NATIVE_REDIRECT,
  authorizationUrl,
  authorizeCode,
  callWhoami,
  expectOAuthError,
  frontChannel,
  fullFlow,
  pkcePair,
  postForm,
  postJson,
  refresh,
  registerClient,
  startAttackStack,
  useAttackStack,
} from './helpers/support.js';

// Attacks on the authorization code grant, end to end against the running AS + demo MCP server.
const OTHER_RESOURCE = 'http://127.0.0.1:1/other-mcp';
const WEB_REDIRECT = 'https://app.example.test/cb';

describe('attack: authorization code grant (OAuth 2.1 §4.1, §7.5; RFC 7636; RFC 8252; RFC 8707)', () => {
  const stack = useAttackStack({ extraResources: [OTHER_RESOURCE] });
  let nativeClient: string;
  let webClient: string;

  beforeAll(async () => {
    nativeClient = await registerClient(stack);
    // A web client never gets contacted: the front channel stops when it leaves the AS.
    webClient = await registerClient(stack, { application_type: 'web', redirect_uris: [WEB_REDIRECT] });
  });

  const exchange = (code: string, verifier: string | undefined, extra: Record<string, string> = {}) =>
    postForm(stack.metadata.token_endpoint, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: NATIVE_REDIRECT,
      client_id: nativeClient,
      ...(verifier !== undefined && { code_verifier: verifier }),
      resource: stack.mcpUrl,
      ...extra,
    });

  describe('PKCE (OAuth 2.1 §4.1.1, §7.5.1; MCP authorization §PKCE: S256 required)', () => {
    it('authorization request without code_challenge → refused (invalid_request), no code issued', async () => {
      const result = await frontChannel(stack.issuer, authorizationUrl(stack, { clientId: nativeClient, challenge: null, method: null }));
      expect(result.kind).toBe('callback');
      const params = (result as { url: URL }).url.searchParams;
      expect(params.get('error')).toBe('invalid_request');
      expect(params.get('code')).toBeNull();
      expect(params.get('iss')).toBe(stack.issuer);
    });

    it('code_challenge_method=plain → refused, no code issued', async () => {
      const { verifier } = pkcePair();
      const params = await authorizeCode(stack, { clientId: nativeClient, challenge: verifier, method: 'plain' });
      expect(params.get('code')).toBeNull();
      expect(params.get('error')).toBe('invalid_request');
    });

    it('code_challenge without a method (defaults to plain, RFC 7636 §4.3) → refused', async () => {
      const { verifier } = pkcePair();
      const params = await authorizeCode(stack, { clientId: nativeClient, challenge: verifier, method: null });
      expect(params.get('code')).toBeNull();
      expect(params.get('error')).toBe('invalid_request');
    });

    it('token request without code_verifier → invalid_grant (or invalid_request)', async () => {
      const { challenge } = pkcePair();
      const code = (await authorizeCode(stack, { clientId: nativeClient, challenge })).get('code')!;
      const res = await exchange(code, undefined);
      expect(res.status).toBe(400);
      expect(['invalid_grant', 'invalid_request']).toContain(res.body.error);
      expect(res.body.access_token).toBeUndefined();
    });

    it('token request with the wrong code_verifier → invalid_grant', async () => {
      const { challenge } = pkcePair();
      const code = (await authorizeCode(stack, { clientId: nativeClient, challenge })).get('code')!;
      const res = await exchange(code, pkcePair().verifier);
      expectOAuthError(res, 'invalid_grant');
    });

    it('token request with the challenge itself as verifier (plain downgrade) → invalid_grant', async () => {
      const { challenge } = pkcePair();
      const code = (await authorizeCode(stack, { clientId: nativeClient, challenge })).get('code')!;
      const res = await exchange(code, challenge);
      expectOAuthError(res, 'invalid_grant');
    });
  });

  describe('front-channel tokens (OAuth 2.1 §10.1: the implicit grant is removed)', () => {
    it('response_type=token (implicit access token) → refused, no token in the redirect', async () => {
      const result = await frontChannel(
        stack.issuer,
        authorizationUrl(stack, { clientId: nativeClient, challenge: pkcePair().challenge, extra: { response_type: 'token' } }),
      );
      if (result.kind === 'callback') {
        const all = `${result.url.search}${result.url.hash}`;
        expect(all).not.toContain('access_token');
        expect(all).toMatch(/error=(unsupported_response_type|unauthorized_client|invalid_request)/);
      } else {
        expect(result.status).toBe(400);
      }
    });

    // OAuth 2.1 §10.1 removes the implicit grant: an MCP AS offers response_types ["code"] only.
    it('DCR refuses the implicit grant and front-channel response types', async () => {
      for (const [grant_types, response_types] of [
        [['implicit'], ['id_token']],
        [['authorization_code', 'implicit'], ['code id_token']],
      ]) {
        const res = await postJson(stack.metadata.registration_endpoint, {
          client_name: 'implicit',
          redirect_uris: [NATIVE_REDIRECT],
          grant_types,
          response_types,
          token_endpoint_auth_method: 'none',
        });
        expect(res.status, JSON.stringify(response_types)).toBe(400);
      }
    });

    it('metadata advertises only the code flow (no implicit grant, response_types_supported = ["code"])', () => {
      expect(stack.metadata.grant_types_supported).not.toContain('implicit');
      expect(stack.metadata.response_types_supported).toEqual(['code']);
    });
  });

  describe('pushed authorization requests (RFC 9126)', () => {
    const par = (form: Record<string, string>) =>
      postForm(stack.metadata.pushed_authorization_request_endpoint as string, {
        response_type: 'code',
        client_id: nativeClient,
        redirect_uri: NATIVE_REDIRECT,
        scope: 'notes:read',
        resource: stack.mcpUrl,
        state: 'par',
        ...form,
      });
    const authorizeWith = (clientId: string, requestUri: string, extra = '') =>
      frontChannel(
        stack.issuer,
        `${stack.metadata.authorization_endpoint}?client_id=${clientId}&request_uri=${encodeURIComponent(requestUri)}${extra}`,
      );

    it('PKCE is required at the PAR endpoint too: missing or plain → invalid_request', async () => {
      expect((await par({})).body.error).toBe('invalid_request');
      expect((await par({ code_challenge: pkcePair().verifier, code_challenge_method: 'plain' })).body.error).toBe('invalid_request');
    });

    it('request_uri of another client → refused; query parameters cannot override the pushed redirect_uri; single use', async () => {
      const pushed = await par({ code_challenge: pkcePair().challenge, code_challenge_method: 'S256' });
      expect(pushed.status).toBe(201);
      const uri = pushed.body.request_uri as string;
      const other = await registerClient(stack);
      const stolen = await authorizeWith(other, uri);
      if (stolen.kind === 'callback') expect(stolen.url.searchParams.get('code')).toBeNull();
      const overridden = await authorizeWith(nativeClient, uri, `&redirect_uri=${encodeURIComponent('http://127.0.0.1:9/evil')}`);
      expect(overridden.kind).toBe('callback');
      const target = (overridden as { url: URL }).url;
      expect(`${target.origin}${target.pathname}`).toBe(NATIVE_REDIRECT);
      const replay = await authorizeWith(nativeClient, uri);
      expect(replay.kind).toBe('callback');
      expect((replay as { url: URL }).url.searchParams.get('code')).toBeNull();
      expect((replay as { url: URL }).url.searchParams.get('error')).toBe('invalid_request_uri');
    });
  });

  describe('authorization code replay (OAuth 2.1 §4.1.3: single use; SHOULD revoke tokens already issued)', () => {
    it("second redemption fails with invalid_grant AND the first redemption's refresh token stops working", async () => {
      const first = await fullFlow(stack, nativeClient);
      expect(first.refresh_token).toBeTruthy();
      const replay = await exchange(first.code, first.verifier);
      expectOAuthError(replay, 'invalid_grant');
      expect(replay.body.access_token).toBeUndefined();
      const afterReplay = await refresh(stack, nativeClient, first.refresh_token!);
      expectOAuthError(afterReplay, 'invalid_grant');
    });

    it('a code presented by another client_id → invalid_grant, no tokens (OAuth 2.1 §4.1.3: code bound to its client)', async () => {
      const other = await registerClient(stack);
      const { verifier, challenge } = pkcePair();
      const code = (await authorizeCode(stack, { clientId: nativeClient, challenge })).get('code')!;
      const stolen = await exchange(code, verifier, { client_id: other });
      expectOAuthError(stolen, 'invalid_grant');
      expect(stolen.body.access_token).toBeUndefined();
      // The failed attempt neither yields tokens nor lets the attacker burn the victim's code.
      expect((await exchange(code, verifier)).status).toBe(200);
    });
  });

  describe('refresh token rotation (OAuth 2.1 §4.3.1; RFC 9700 §4.14.2 reuse detection)', () => {
    /** A fresh grant of the native client whose refresh token was rotated once. */
    async function rotatedOnce() {
      const tokens = await fullFlow(stack, nativeClient);
      const rotated = await refresh(stack, nativeClient, tokens.refresh_token!);
      expect(rotated.status).toBe(200);
      return { tokens, rotated };
    }

    /** The old refresh token sent again inside the grace window, with `changes` to the request. */
    const replayWith = (refreshToken: string, changes: Record<string, string>) =>
      postForm(stack.metadata.token_endpoint, {
        grant_type: 'refresh_token',
        refresh_token: refreshToken,
        client_id: nativeClient,
        resource: stack.mcpUrl,
        ...changes,
      });

    it('default grace window: a replay by the same client and request gets the SAME pair (nothing new minted); once the new token is used, the replay revokes the grant', async () => {
      const { tokens, rotated } = await rotatedOnce();
      const next = rotated.body.refresh_token as string;
      expect(next).toBeTruthy();
      expect(next).not.toBe(tokens.refresh_token);
      // Within the (documented, 10 s) grace window the replay is an idempotent retry.
      const retry = await refresh(stack, nativeClient, tokens.refresh_token!);
      if (retry.status === 200) {
        expect(retry.body.refresh_token).toBe(next);
        expect(retry.body.access_token).toBe(rotated.body.access_token);
      } else {
        expect(retry.body.error).toBe('invalid_grant');
      }
      // The legitimate holder moves on; now the old token is plain reuse.
      const third = await refresh(stack, nativeClient, next);
      expect(third.status).toBe(200);
      expectOAuthError(await refresh(stack, nativeClient, tokens.refresh_token!), 'invalid_grant');
      expectOAuthError(await refresh(stack, nativeClient, third.body.refresh_token as string), 'invalid_grant');
    });

    it('replay with a different request (another scope) inside the window → refused, and the grant is revoked', async () => {
      const { tokens, rotated } = await rotatedOnce();
      expectOAuthError(await replayWith(tokens.refresh_token!, { scope: 'notes:read' }), 'invalid_grant');
      expectOAuthError(await refresh(stack, nativeClient, rotated.body.refresh_token as string), 'invalid_grant');
    });

    it('replay with a resource the grant does not cover → invalid_target, nothing issued (checked before the token is consumed)', async () => {
      const { tokens } = await rotatedOnce();
      const replay = await replayWith(tokens.refresh_token!, { resource: OTHER_RESOURCE });
      expect(replay.status).toBe(400);
      expect(['invalid_target', 'invalid_grant']).toContain(replay.body.error);
      expect(replay.body.access_token).toBeUndefined();
    });

    it('a rotated refresh token presented by ANOTHER client → invalid_grant and the victim grant is revoked', async () => {
      const { tokens, rotated } = await rotatedOnce();
      const other = await registerClient(stack);
      expectOAuthError(await refresh(stack, other, tokens.refresh_token!), 'invalid_grant');
      const newest = await refresh(stack, nativeClient, rotated.body.refresh_token as string);
      expect(newest.status).toBe(400);
    });

    it('a live refresh token presented by another client → invalid_grant', async () => {
      const tokens = await fullFlow(stack, nativeClient);
      const other = await registerClient(stack);
      const res = await refresh(stack, other, tokens.refresh_token!);
      expectOAuthError(res, 'invalid_grant');
    });

    it('strict mode (refreshTokens.reuseGraceSeconds: 0): the first replay already revokes the newest token', async () => {
      const strict = await startAttackStack({ authorizationServer: { refreshTokens: { reuseGraceSeconds: 0 } } });
      try {
        const client = await registerClient(strict);
        const tokens = await fullFlow(strict, client);
        const rotated = await refresh(strict, client, tokens.refresh_token!);
        expect(rotated.status).toBe(200);
        const replay = await refresh(strict, client, tokens.refresh_token!);
        expectOAuthError(replay, 'invalid_grant');
        const newest = await refresh(strict, client, rotated.body.refresh_token as string);
        expectOAuthError(newest, 'invalid_grant');
      } finally {
        await strict.close();
      }
    });
  });

  describe('redirect URI exact matching (OAuth 2.1 §2.3.1, §7.12; RFC 8252 §7.3 any port for native loopback)', () => {
    const refused = async (clientId: string, redirectUri: string) => {
      const result = await frontChannel(stack.issuer, authorizationUrl(stack, { clientId, redirectUri, challenge: pkcePair().challenge }));
      // The AS must not redirect to an unregistered URI, not even with an error.
      expect(result.kind, `redirected to ${redirectUri}`).toBe('stopped');
      expect((result as { status: number }).status).toBe(400);
      expect((result as { body: string }).body).not.toContain('code=');
    };
    const allowed = async (clientId: string, redirectUri: string) => {
      const result = await frontChannel(stack.issuer, authorizationUrl(stack, { clientId, redirectUri, challenge: pkcePair().challenge }));
      expect(result.kind).toBe('callback');
      const url = (result as { url: URL }).url;
      expect(url.origin + url.pathname).toBe(new URL(redirectUri).origin + new URL(redirectUri).pathname);
      expect(url.searchParams.get('code')).toBeTruthy();
    };

    for (const [attack, variant] of [
      ['path prefix', 'https://app.example.test/c'],
      ['suffix appended to the path', 'https://app.example.test/cbx'],
      ['extra path segment', 'https://app.example.test/cb/evil'],
      ['dot-segment traversal', 'https://app.example.test/cb/../evil'],
      ['query added', 'https://app.example.test/cb?next=https://evil.test'],
      ['fragment added', 'https://app.example.test/cb#x'],
      ['path case change', 'https://app.example.test/CB'],
      ['host suffix', 'https://app.example.test.evil.test/cb'],
      ['subdomain', 'https://evil.app.example.test/cb'],
      ['userinfo', 'https://attacker@app.example.test/cb'],
      ['userinfo host confusion', 'https://app.example.test@evil.test/cb'],
      ['other port for a web client', 'https://app.example.test:8443/cb'],
      ['scheme downgrade', 'http://app.example.test/cb'],
      ['trailing slash', 'https://app.example.test/cb/'],
    ] as const) {
      it(`web client: ${attack} (${variant}) → refused without redirect`, async () => {
        await refused(webClient, variant);
      });
    }

    it('web client: the exact registered URI → code', async () => {
      await allowed(webClient, WEB_REDIRECT);
    });

    it('RFC 8252 §7.3: native loopback client, any port on the registered loopback URI → code', async () => {
      await allowed(nativeClient, 'http://127.0.0.1:49152/callback');
      await allowed(nativeClient, 'http://127.0.0.1:3/callback');
    });

    for (const [attack, variant] of [
      ['other path on loopback', 'http://127.0.0.1:49152/callbackx'],
      ['other loopback name (localhost)', 'http://localhost:49152/callback'],
      ['other loopback address', 'http://127.0.0.2:49152/callback'],
      ['query added', 'http://127.0.0.1:49152/callback?x=1'],
      ['https on the same loopback', 'https://127.0.0.1:49152/callback'],
      ['non-loopback host', 'http://evil.test:49152/callback'],
    ] as const) {
      it(`native client: ${attack} (${variant}) → refused without redirect`, async () => {
        await refused(nativeClient, variant);
      });
    }

    it("token request with a redirect_uri other than the authorization request's → invalid_grant", async () => {
      const { verifier, challenge } = pkcePair();
      const code = (await authorizeCode(stack, { clientId: nativeClient, challenge, redirectUri: 'http://127.0.0.1:5000/callback' })).get(
        'code',
      )!;
      const res = await exchange(code, verifier, { redirect_uri: 'http://127.0.0.1:5001/callback' });
      expectOAuthError(res, 'invalid_grant');
    });
  });

  describe('resource indicator mix-ups (RFC 8707 §2; MCP authorization §Resource Parameter)', () => {
    it('authorized for the MCP server, token requested for another resource → refused, no token', async () => {
      const { verifier, challenge } = pkcePair();
      const code = (await authorizeCode(stack, { clientId: nativeClient, challenge })).get('code')!;
      const res = await exchange(code, verifier, { resource: OTHER_RESOURCE });
      expect(res.status).toBe(400);
      expect(['invalid_target', 'invalid_grant']).toContain(res.body.error);
      expect(res.body.access_token).toBeUndefined();
    });

    it('authorized for another resource, token requested for the MCP server → refused, no token', async () => {
      const { verifier, challenge } = pkcePair();
      const code = (await authorizeCode(stack, { clientId: nativeClient, challenge, resource: OTHER_RESOURCE })).get('code')!;
      const res = await exchange(code, verifier, { resource: stack.mcpUrl });
      expect(res.status).toBe(400);
      expect(['invalid_target', 'invalid_grant']).toContain(res.body.error);
    });

    it('unknown resource at the authorization endpoint → invalid_target, no code', async () => {
      const params = await authorizeCode(stack, {
        clientId: nativeClient,
        challenge: pkcePair().challenge,
        resource: 'http://127.0.0.1:2/unknown',
      });
      expect(params.get('code')).toBeNull();
      expect(params.get('error')).toBe('invalid_target');
    });

    it('resource with a fragment → invalid_target', async () => {
      const params = await authorizeCode(stack, {
        clientId: nativeClient,
        challenge: pkcePair().challenge,
        resource: `${stack.mcpUrl}#frag`,
      });
      expect(params.get('code')).toBeNull();
      expect(['invalid_target', 'invalid_request']).toContain(params.get('error'));
    });

    it('a token for the other resource is refused by the MCP server (audience, RFC 8707 / MCP §Token Audience Binding)', async () => {
      const { verifier, challenge } = pkcePair();
      const code = (await authorizeCode(stack, { clientId: nativeClient, challenge, resource: OTHER_RESOURCE })).get('code')!;
      const res = await exchange(code, verifier, { resource: OTHER_RESOURCE });
      expect(res.status).toBe(200);
      const mcp = await callWhoami(stack.mcpUrl, res.body.access_token as string);
      expect(mcp.status).toBe(401);
      expect(mcp.headers.get('www-authenticate')).toContain('error="invalid_token"');
    });

    it("refresh for another resource than the grant's → refused", async () => {
      const tokens = await fullFlow(stack, nativeClient);
      const res = await postForm(stack.metadata.token_endpoint, {
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token!,
        client_id: nativeClient,
        resource: OTHER_RESOURCE,
      });
      expect(res.status).toBe(400);
      expect(['invalid_target', 'invalid_grant']).toContain(res.body.error);
    });
  });
});
