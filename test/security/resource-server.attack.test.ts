import { createPrivateKey, createPublicKey, randomUUID, sign } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { SignJWT, exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';
import { assertInvalidToken, assertUnauthorized } from '@mcp-auth-kit/testing';
import { callWhoami, fullFlow, registerClient, useAttackStack } from './helpers/support.js';

const b64 = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

/**
 * Token forgeries and transport attacks at the demo MCP server (RFC 9068 §4, RFC 8725 §2-3,
 * RFC 6750 §2 and §3.1, MCP authorization §Token Handling / §Access Token Privilege Restriction,
 * Streamable HTTP §Security: Origin).
 */
describe('attack: forged and misused access tokens at the MCP server', () => {
  const stack = useAttackStack();
  let signingJwk: JWK;
  let publicJwk: JWK;
  let legit: string;

  beforeAll(async () => {
    const [current] = await stack.as.server.store.keys.signingKeys();
    signingJwk = current!.jwk;
    const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, ...pub } = signingJwk as Record<string, unknown>;
    publicJwk = pub as JWK;
    const clientId = await registerClient(stack);
    legit = (await fullFlow(stack, clientId)).access_token;
  });

  const now = () => Math.floor(Date.now() / 1000);
  const claims = (over: Record<string, unknown> = {}) => ({
    iss: stack.issuer,
    aud: stack.mcpUrl,
    sub: 'attacker-chosen-subject',
    client_id: 'forged-client',
    scope: 'notes:read notes:write',
    jti: randomUUID(),
    iat: now(),
    exp: now() + 300,
    ...over,
  });
  /** Signs with the AS's real key: only the named deviation makes the token invalid. */
  const signWithAsKey = async (over: Record<string, unknown> = {}, header: Record<string, unknown> = {}) => {
    const alg = String(signingJwk.alg ?? 'RS256');
    const key = await importJWK(signingJwk, alg);
    return new SignJWT(claims(over)).setProtectedHeader({ alg, kid: signingJwk.kid, typ: 'at+jwt', ...header }).sign(key);
  };

  it('baseline: the legitimately issued token is accepted, and so is one the test signs with the AS key (the forging harness is right)', async () => {
    expect((await callWhoami(stack.mcpUrl, legit)).status).toBe(200);
    expect((await callWhoami(stack.mcpUrl, await signWithAsKey())).status).toBe(200);
  });

  it('RFC 8725 §3.1: alg "none" (unsigned) → 401 invalid_token', async () => {
    const token = `${b64({ alg: 'none', typ: 'at+jwt', kid: signingJwk.kid })}.${b64(claims())}.`;
    assertInvalidToken(await callWhoami(stack.mcpUrl, token));
    const noKid = `${b64({ alg: 'none', typ: 'at+jwt' })}.${b64(claims())}.`;
    assertInvalidToken(await callWhoami(stack.mcpUrl, noKid));
  });

  it('RFC 8725 §2.1: HS256 signed with the AS PUBLIC key as the HMAC secret (key confusion) → 401', async () => {
    const pem = createPublicKey({ key: publicJwk as never, format: 'jwk' }).export({ type: 'spki', format: 'pem' }) as string;
    for (const secret of [pem, JSON.stringify(publicJwk), String(publicJwk.n ?? publicJwk.x ?? '')]) {
      const token = await new SignJWT(claims())
        .setProtectedHeader({ alg: 'HS256', kid: signingJwk.kid, typ: 'at+jwt' })
        .sign(new TextEncoder().encode(secret));
      assertInvalidToken(await callWhoami(stack.mcpUrl, token));
    }
  });

  it('foreign key: signed by an attacker key reusing the AS kid, or with an unknown kid → 401', async () => {
    const alg = String(signingJwk.alg ?? 'RS256');
    const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
    for (const kid of [signingJwk.kid, 'attacker-kid']) {
      const token = await new SignJWT(claims()).setProtectedHeader({ alg, kid, typ: 'at+jwt' }).sign(privateKey);
      assertInvalidToken(await callWhoami(stack.mcpUrl, token));
    }
    // RFC 8725 §3.10: the key must not come from the token itself (embedded jwk / jku).
    const embedded = await new SignJWT(claims())
      .setProtectedHeader({ alg, typ: 'at+jwt', jwk: await exportJWK(publicKey) })
      .sign(privateKey);
    assertInvalidToken(await callWhoami(stack.mcpUrl, embedded));
    const jku = await new SignJWT(claims())
      .setProtectedHeader({ alg, typ: 'at+jwt', kid: 'x', jku: 'http://127.0.0.1:1/jwks' })
      .sign(privateKey);
    assertInvalidToken(await callWhoami(stack.mcpUrl, jku));
  });

  it('tampered payload with the original signature (scope escalation) → 401', async () => {
    const [h, p, s] = legit.split('.');
    const payload = JSON.parse(Buffer.from(p!, 'base64url').toString());
    payload.scope = 'notes:read notes:write admin';
    assertInvalidToken(await callWhoami(stack.mcpUrl, `${h}.${b64(payload)}.${s}`));
  });

  it('RFC 8707 / MCP §Token Audience Binding: wrong audience, signed by the AS → 401', async () => {
    assertInvalidToken(await callWhoami(stack.mcpUrl, await signWithAsKey({ aud: 'http://127.0.0.1:1/other-mcp' })));
    // (A trailing slash is the same canonical resource by design; other paths are not.)
    assertInvalidToken(await callWhoami(stack.mcpUrl, await signWithAsKey({ aud: `${stack.mcpUrl}2` })));
    assertInvalidToken(await callWhoami(stack.mcpUrl, await signWithAsKey({ aud: stack.mcpUrl.replace(/\/mcp$/, '/MCP') })));
    assertInvalidToken(await callWhoami(stack.mcpUrl, await signWithAsKey({ aud: `${stack.mcpUrl}/x` })));
    assertInvalidToken(await callWhoami(stack.mcpUrl, await signWithAsKey({ aud: [] })));
    assertInvalidToken(await callWhoami(stack.mcpUrl, await signWithAsKey({ aud: undefined })));
  });

  it('RFC 9068 §4: wrong issuer, signed by the AS key → 401', async () => {
    assertInvalidToken(await callWhoami(stack.mcpUrl, await signWithAsKey({ iss: 'http://127.0.0.1:1' })));
    assertInvalidToken(await callWhoami(stack.mcpUrl, await signWithAsKey({ iss: `${stack.issuer}/` })));
  });

  it('RFC 9068 §4: expired beyond tolerance, not yet valid, no exp → 401', async () => {
    assertInvalidToken(await callWhoami(stack.mcpUrl, await signWithAsKey({ iat: now() - 3600, exp: now() - 300 })));
    assertInvalidToken(await callWhoami(stack.mcpUrl, await signWithAsKey({ nbf: now() + 600 })));
    assertInvalidToken(await callWhoami(stack.mcpUrl, await signWithAsKey({ exp: undefined })));
  });

  it('RFC 9068 §4: typ other than at+jwt (e.g. an ID token shape) → 401', async () => {
    assertInvalidToken(await callWhoami(stack.mcpUrl, await signWithAsKey({}, { typ: 'JWT' })));
  });

  it('RFC 7515 §4.1.11: unknown critical header → 401', async () => {
    // jose refuses to produce such a token, so it is signed by hand with the AS key.
    const alg = String(signingJwk.alg);
    const input = `${b64({ alg, kid: signingJwk.kid, typ: 'at+jwt', crit: ['x-unknown'], 'x-unknown': 1 })}.${b64(claims())}`;
    const key = createPrivateKey({ key: signingJwk as never, format: 'jwk' });
    const signature = alg.startsWith('ES')
      ? sign(`sha${alg.slice(2)}`, Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' })
      : sign(`sha${alg.slice(2)}`, Buffer.from(input), key);
    assertInvalidToken(await callWhoami(stack.mcpUrl, `${input}.${signature.toString('base64url')}`));
  });

  it('token substitution: an ID token, a refresh token or an authorization code used as the access token → 401', async () => {
    const clientId = await registerClient(stack);
    const tokens = await fullFlow(stack, clientId, { scope: 'openid notes:read' });
    const substitutes = [tokens.refresh_token, tokens.code, typeof tokens.id_token === 'string' ? tokens.id_token : undefined].filter(
      (t): t is string => typeof t === 'string',
    );
    // openid is in scopes_supported, so the code flow also returns an ID token.
    expect(typeof tokens.id_token).toBe('string');
    expect(substitutes).toHaveLength(3);
    for (const t of substitutes) assertInvalidToken(await callWhoami(stack.mcpUrl, t));
  });

  it('MCP §Token Handling / RFC 6750 §2.3: access_token in the query string is never accepted', async () => {
    const url = `${stack.mcpUrl}?access_token=${encodeURIComponent(legit)}`;
    const res = await callWhoami(url, undefined);
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(res.status).not.toBe(200);
  });

  it('RFC 6750 §2.2: access_token in a form body is never accepted', async () => {
    const res = await fetch(stack.mcpUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json, text/event-stream' },
      body: `access_token=${encodeURIComponent(legit)}`,
    });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
  });

  it('RFC 6750 §3.1: malformed Authorization headers → 400/401, never 5xx, never accepted', async () => {
    for (const value of [
      `Bearer ${legit} extra`,
      `Bearer\t${legit}`,
      `Basic ${legit}`,
      'Bearer',
      `Bearer ${legit},Bearer ${legit}`,
      `Bearer ${'a'.repeat(10000)}`,
    ]) {
      const res = await callWhoami(stack.mcpUrl, undefined, { authorization: value });
      expect([400, 401], value.slice(0, 30)).toContain(res.status);
    }
    assertUnauthorized(await callWhoami(stack.mcpUrl, undefined));
  });

  it('oversized request body (10 MiB) with and without a token → 4xx (413 with a token), never 5xx; the server stays healthy', async () => {
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'add_note', arguments: { text: 'x'.repeat(10 * 1024 * 1024) } },
    });
    for (const token of [legit, undefined]) {
      const res = await fetch(stack.mcpUrl, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...(token && { authorization: `Bearer ${token}` }),
        },
        body,
      }).catch(() => undefined);
      // The server may also cut the upload short (connection reset): that is a refusal too.
      if (res) {
        expect(res.status).toBeGreaterThanOrEqual(400);
        expect(res.status).toBeLessThan(500);
        if (token) expect(res.status).toBe(413);
        await res.arrayBuffer().catch(() => undefined);
      }
    }
    expect((await callWhoami(stack.mcpUrl, legit)).status).toBe(200);
  });

  it('Streamable HTTP §Security (DNS rebinding / CSRF): a foreign Origin is refused even with a valid token', async () => {
    for (const origin of [
      'http://evil.test',
      'null',
      'http://localhost:1',
      `${new URL(stack.mcpUrl).origin}.evil.test`,
      'https://localhost',
    ]) {
      const res = await callWhoami(stack.mcpUrl, legit, { origin });
      expect(res.status, origin).toBe(403);
      expect(res.headers.get('access-control-allow-origin'), origin).toBeNull();
    }
    const same = await callWhoami(stack.mcpUrl, legit, { origin: new URL(stack.mcpUrl).origin });
    expect(same.status).toBe(200);
  });

  it('Streamable HTTP §Security: a foreign Host header (DNS rebinding) is refused', async () => {
    const url = new URL(stack.mcpUrl);
    const { request } = await import('node:http');
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: url.port,
          path: url.pathname,
          method: 'POST',
          headers: { host: 'evil.test', authorization: `Bearer ${legit}`, 'content-type': 'application/json' },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end('{}');
    });
    expect(status).toBe(403);
  });
});
