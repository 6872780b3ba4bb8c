import { createHash } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { startTestIdp } from '@mcp-auth-kit/testing';
import { respeltSignature } from '@mcp-auth-kit/test-utils';
import { SignJWT, calculateJwkThumbprint, decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, type JWK } from 'jose';
import { randomUUID } from 'node:crypto';
import { auditLogger, expectOAuthError, postForm, postJson, useAttackStack, type JsonResponse } from './helpers/support.js';
import { sharedForSuite } from '../helpers/suite.js';
import { secretClient } from '../helpers/clients.js';

/**
 * The ID-JAG grant of MCP enterprise-managed authorization at our AS (RFC 7523 §2.1,
 * draft-ietf-oauth-identity-assertion-authz-grant §4.4.1, MCP profile §5.1 and §7): each check
 * is tried with an assertion that fails exactly that check, and refused with the code the
 * specifications name and a description that says which check failed.
 */
const GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const SECRET = 'agent-secret-0123456789abcdef';

const confidential = (client_id: string, extra: Record<string, unknown> = {}) => secretClient(client_id, SECRET, [GRANT], extra);

describe('ID-JAG grant (RFC 7523 §2.1, draft-ietf-oauth-identity-assertion-authz-grant §4.4.1): every check refuses its attack', () => {
  const otherResource = 'https://other.example/mcp';
  const events: Array<Record<string, unknown>> = [];
  const idp = sharedForSuite(startTestIdp);
  const foreign = sharedForSuite(startTestIdp);
  const stack = useAttackStack(() => ({
    extraResources: [otherResource],
    logger: auditLogger(events),
    quiet: false,
    authorizationServer: {
      clients: [
        confidential('agent'),
        confidential('other-agent'),
        confidential('not-for-idjag', { grant_types: ['client_credentials'] }),
        confidential('limited', { scope: 'notes:read' }),
      ],
      idJag: {
        trustedIdps: [
          {
            name: 'Acme IdP',
            issuer: idp.issuer,
            jwksUri: idp.jwksUri,
            clients: ['agent', 'not-for-idjag', 'limited'],
            accountMatch: 'email',
            emailDomains: ['acme.example'],
          },
        ],
      },
    },
  }));
  let resource: string;

  const token = (params: Record<string, string>, clientId = 'agent', secret = SECRET): Promise<JsonResponse> =>
    postForm(
      stack.metadata.token_endpoint,
      { grant_type: GRANT, ...params },
      {
        authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`,
      },
    );
  const jag = (claims: Record<string, unknown> = {}, header?: Record<string, unknown>, from = idp) =>
    from.idJag({ sub: 'U019488227', aud: stack.issuer, client_id: 'agent', resource, scope: 'notes:read', ...claims }, header);
  const refused = (res: JsonResponse, error: string, description: RegExp) => {
    expect(res.status, res.text).toBeGreaterThanOrEqual(400);
    expect(res.body.error).toBe(error);
    expect(String(res.body.error_description)).toMatch(description);
    expect(res.body.access_token).toBeUndefined();
  };

  beforeAll(() => {
    resource = stack.mcpUrl;
  });

  it('AS metadata advertises the grant type and the ID-JAG profile (RFC 8414 §2, draft §7.2)', () => {
    expect(stack.metadata.grant_types_supported).toContain(GRANT);
    expect(stack.metadata.authorization_grant_profiles_supported).toEqual(['urn:ietf:params:oauth:grant-profile:id-jag']);
    // draft §8.4: the metadata names no trusted issuer.
    expect(JSON.stringify(stack.metadata)).not.toContain(idp.issuer);
  });

  it('a valid ID-JAG gets our RFC 9068 access token for its resource, with its scopes, and no refresh token (draft §4.4.3)', async () => {
    const res = await token({ assertion: await jag() });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ token_type: 'Bearer', scope: 'notes:read' });
    expect(res.body.refresh_token).toBeUndefined();
    expect(decodeProtectedHeader(String(res.body.access_token)).typ).toBe('at+jwt');
    const claims = decodeJwt(String(res.body.access_token));
    expect(claims).toMatchObject({ iss: stack.issuer, aud: resource, client_id: 'agent', scope: 'notes:read' });
    expect(events.some((e) => e.audit === 'id_jag.accepted' && e.via === 'created')).toBe(true);
    // The middleware needs nothing new: the demo MCP server accepts it.
    const mcp = await postJson(
      stack.mcpUrl,
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      {
        authorization: `Bearer ${String(res.body.access_token)}`,
        accept: 'application/json, text/event-stream',
      },
    );
    expect(mcp.status).not.toBe(401);
  });

  it('the same user gets the same account again (iss + sub), visible among the accounts', async () => {
    const a = decodeJwt(String((await token({ assertion: await jag() })).body.access_token)).sub;
    const b = decodeJwt(String((await token({ assertion: await jag() })).body.access_token)).sub;
    expect(a).toBe(b);
    const account = await stack.as.server.store.accounts.findById(String(a));
    expect(account?.upstreamIdentities).toEqual([`${idp.issuer} U019488227`]);
  });

  it('RFC 7523 §3 item 9: a forged signature (a key the IdP does not publish) → invalid_grant', async () => {
    const real = await jag();
    const forgedBy = await startTestIdp();
    try {
      const forged = await forgedBy.idJag({ ...decodeJwt(real), iss: idp.issuer, jti: 'forged-1' });
      refused(await token({ assertion: forged }), 'invalid_grant', /signature does not verify/);
      const [h, , s] = real.split('.');
      const tampered = `${h}.${Buffer.from(JSON.stringify({ ...decodeJwt(real), scope: 'notes:read notes:write' })).toString('base64url')}.${s}`;
      refused(await token({ assertion: tampered }), 'invalid_grant', /signature does not verify/);
    } finally {
      await forgedBy.close();
    }
  });

  it('alg none and a non-JWT are refused (RFC 8725 §3.1)', async () => {
    const none = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'oauth-id-jag+jwt' })).toString('base64url')}.${Buffer.from(
      JSON.stringify({ ...decodeJwt(await jag()), jti: 'none-1' }),
    ).toString('base64url')}.`;
    refused(await token({ assertion: none }), 'invalid_grant', /signature/);
    refused(await token({ assertion: 'not-a-jwt' }), 'invalid_grant', /not a signed JWT/);
  });

  it('RFC 7523 §3 / RFC 7519 §7.2: an assertion whose claims are not a JSON object, or that is not a compact JWS, is malformed', async () => {
    const [h, , s] = (await jag()).split('.');
    const b64 = (value: string) => Buffer.from(value).toString('base64url');
    const notJws = [
      // the claims as a JSON array or string, whose `iss` reads as nothing
      `${h}.${b64(JSON.stringify([{ iss: idp.issuer }]))}.${s}`,
      `${h}.${b64(JSON.stringify(idp.issuer))}.${s}`,
      // a payload outside base64url, not JSON, or empty
      `${h}.***.${s}`,
      `${h}.${b64('{"iss":')}.${s}`,
      `${h}..${s}`,
      // five parts: the JWE compact serialization, not a signed JWT
      `${h}.a.b.c.d`,
    ];
    // RFC 7515 §7.1 / §2: a valid assertion spelt with whitespace or padding inside a segment (jose's
    // decoder would skip the whitespace, and the signature would still verify), or (RFC 4648 §3.5)
    // with an unused bit of the signature's last character set: the same signature bytes
    const [vh, vp, vs] = (await jag()).split('.');
    notJws.push(
      `${vh}.${vp}.${vs!.slice(0, 10)} ${vs!.slice(10)}`,
      `${vh}.${vp}.${vs!.slice(0, 10)}\n${vs!.slice(10)}`,
      `${vh}.${vp}=.${vs}`,
      respeltSignature(`${vh}.${vp}.${vs}`),
    );
    for (const assertion of notJws) refused(await token({ assertion }), 'invalid_grant', /not a signed JWT/);
  });

  it('draft §4.4.1 / RFC 8725 §3.11: typ other than oauth-id-jag+jwt (an ID Token) → invalid_grant', async () => {
    refused(await token({ assertion: await jag({}, { typ: 'JWT' }) }), 'invalid_grant', /typ must be "oauth-id-jag\+jwt"/);
    const idToken = await idp.idToken({ sub: 'U019488227', clientId: 'agent', aud: stack.issuer });
    refused(await token({ assertion: idToken }), 'invalid_grant', /typ/);
  });

  it('a foreign IdP (not configured) → invalid_grant', async () => {
    refused(await token({ assertion: await jag({}, undefined, foreign) }), 'invalid_grant', /not issued by a trusted identity provider/);
  });

  it('draft §4.4.1: aud other than our issuer, or not alone → invalid_grant', async () => {
    refused(
      await token({ assertion: await jag({ aud: 'https://other-as.example' }) }),
      'invalid_grant',
      /aud must be this server's issuer/,
    );
    refused(await token({ assertion: await jag({ aud: [stack.issuer, 'https://other-as.example'] }) }), 'invalid_grant', /aud/);
    refused(await token({ assertion: await jag({ aud: `${stack.issuer}/token` }) }), 'invalid_grant', /aud/);
  });

  it('draft §4.4.1: client_id claim other than the authenticated client → invalid_grant', async () => {
    refused(
      await token({ assertion: await jag({ client_id: 'other-agent' }) }),
      'invalid_grant',
      /client_id is not the authenticated client/,
    );
    // other-agent presenting an ID-JAG made out to it, but the IdP may not speak for other-agent.
    refused(await token({ assertion: await jag({ client_id: 'other-agent' }) }, 'other-agent'), 'unauthorized_client', /may not present/);
  });

  it('MCP profile §7.6.2: a resource that is not ours → invalid_grant; a resource parameter beyond the ID-JAG → invalid_target', async () => {
    refused(
      await token({ assertion: await jag({ resource: 'https://evil.example/mcp' }) }),
      'invalid_grant',
      /not a resource of this server/,
    );
    refused(await token({ assertion: await jag(), resource: otherResource }), 'invalid_target', /not one the assertion grants/);
    refused(
      await token({ assertion: await jag(), resource: 'https://evil.example/mcp' }),
      'invalid_target',
      /not a resource of this server/,
    );
  });

  it('the resource claim becomes the token audience (RFC 8707), also when the client names it', async () => {
    const res = await token({ assertion: await jag({ resource: otherResource }), resource: otherResource });
    expect(res.status, res.text).toBe(200);
    expect(decodeJwt(String(res.body.access_token)).aud).toBe(otherResource);
  });

  it('RFC 7523 §3 items 4-6: expired, not yet valid, issued in the future, too long-lived, missing exp/iat/jti/sub → invalid_grant', async () => {
    const now = Math.floor(Date.now() / 1000);
    refused(await token({ assertion: await jag({ iat: now - 400, exp: now - 100 }) }), 'invalid_grant', /expired/);
    refused(await token({ assertion: await jag({ nbf: now + 600 }) }), 'invalid_grant', /not valid yet/);
    refused(await token({ assertion: await jag({ iat: now + 120, exp: now + 300 }) }), 'invalid_grant', /issued in the future/);
    refused(await token({ assertion: await jag({ exp: now + 86_400 }) }), 'invalid_grant', /valid for too long/);
    refused(await token({ assertion: await jag({ iat: now - 3600, exp: now + 60 }) }), 'invalid_grant', /issued more than/);
    refused(await token({ assertion: await jag({ exp: undefined }) }), 'invalid_grant', /no exp/);
    refused(await token({ assertion: await jag({ iat: undefined }) }), 'invalid_grant', /no iat/);
    refused(await token({ assertion: await jag({ jti: undefined }) }), 'invalid_grant', /no jti/);
    refused(await token({ assertion: await jag({ sub: undefined as never }) }), 'invalid_grant', /no sub/);
  });

  it('MCP profile §7.4.2: a replayed jti → invalid_grant (the first use wins, also under concurrency)', async () => {
    const assertion = await jag();
    const results = await Promise.all([token({ assertion }), token({ assertion }), token({ assertion })]);
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    for (const r of results.filter((x) => x.status !== 200)) refused(r, 'invalid_grant', /already been used/);
    // The replay key is the (iss, jti) pair, stored hashed in the shared store.
    const key = createHash('sha256')
      .update(`${idp.issuer}\u0000${String(decodeJwt(assertion).jti)}`)
      .digest('base64url');
    expect(await stack.as.server.store.kv.get('id-jag-jti', key)).toBe(3);
  });

  it('RFC 6749 §3.3 / MCP profile §7.2.1: scope escalation → invalid_scope; scopes the resource does not define → invalid_grant', async () => {
    refused(
      await token({ assertion: await jag(), scope: 'notes:read notes:write' }),
      'invalid_scope',
      /exceeds what the assertion grants: notes:write/,
    );
    refused(await token({ assertion: await jag({ scope: 'notes:read admin' }) }), 'invalid_grant', /does not define: admin/);
    // A narrower request is granted as asked.
    const narrow = await token({ assertion: await jag({ scope: 'notes:read notes:write' }), scope: 'notes:read' });
    expect(narrow.body.scope).toBe('notes:read');
  });

  it('scopes are limited to what the client may hold (its registered resource scopes)', async () => {
    const res = await token({ assertion: await jag({ client_id: 'limited', scope: 'notes:read notes:write' }) }, 'limited');
    expect(res.status, res.text).toBe(200);
    expect(res.body.scope).toBe('notes:read');
    refused(
      await token({ assertion: await jag({ client_id: 'limited', scope: 'notes:write' }) }, 'limited'),
      'invalid_scope',
      /none of the scopes/,
    );
  });

  it('a disabled account is refused (invalid_grant), and enabled again it works', async () => {
    const first = await token({ assertion: await jag({ sub: 'to-disable' }) });
    const sub = String(decodeJwt(String(first.body.access_token)).sub);
    await stack.as.server.store.accounts.update(sub, { disabled: true });
    refused(await token({ assertion: await jag({ sub: 'to-disable' }) }), 'invalid_grant', /disabled/);
    await stack.as.server.store.accounts.update(sub, { disabled: false });
    expect((await token({ assertion: await jag({ sub: 'to-disable' }) })).status).toBe(200);
  });

  it('account linking by verified e-mail (MCP "Handle Account Linking"): only verified addresses of the allowed domains', async () => {
    // An account the operator made (the demo account is marked `demo` and is never linked).
    const demo = await stack.as.server.store.accounts.create({
      id: 'operator-pat',
      username: 'pat-to-be',
      passwordHash: null,
      disabled: false,
    });
    await stack.as.server.store.accounts.update(demo!.id, { username: 'pat@acme.example' });
    // Unverified: a new account, never the existing one.
    const unverified = await token({ assertion: await jag({ sub: 'pat-1', email: 'pat@acme.example', email_verified: false }) });
    expect(decodeJwt(String(unverified.body.access_token)).sub).not.toBe(demo!.id);
    // Another domain: not linked either.
    await stack.as.server.store.accounts.update(demo!.id, { username: 'pat@evil.example' });
    const foreignDomain = await token({ assertion: await jag({ sub: 'pat-2', email: 'pat@evil.example', email_verified: true }) });
    expect(decodeJwt(String(foreignDomain.body.access_token)).sub).not.toBe(demo!.id);
    // Verified, allowed domain: linked to the existing account, by (iss, sub) from then on.
    await stack.as.server.store.accounts.update(demo!.id, { username: 'pat@acme.example' });
    const linked = await token({ assertion: await jag({ sub: 'pat-3', email: 'Pat@acme.example', email_verified: true }) });
    expect(decodeJwt(String(linked.body.access_token)).sub).toBe(demo!.id);
    expect((await stack.as.server.store.accounts.findById(demo!.id))?.upstreamIdentities).toContain(`${idp.issuer} pat-3`);
    await stack.as.server.store.accounts.update(demo!.id, { username: 'pat-linked' });
  });

  it('draft §8.1: a public client cannot use the grant (invalid_client)', async () => {
    const reg = await postJson(stack.metadata.registration_endpoint, {
      client_name: 'public',
      redirect_uris: ['http://127.0.0.1/callback'],
      token_endpoint_auth_method: 'none',
    });
    const clientId = String(reg.body.client_id);
    const res = await postForm(stack.metadata.token_endpoint, {
      grant_type: GRANT,
      client_id: clientId,
      assertion: await jag({ client_id: clientId }),
    });
    refused(res, 'invalid_client', /public clients cannot use it/);
  });

  it('a DCR client cannot register for the grant, nor use it without it, unless the operator allows (unauthorized_client)', async () => {
    const withGrant = await postJson(stack.metadata.registration_endpoint, {
      client_name: 'dcr',
      redirect_uris: ['http://127.0.0.1/callback'],
      grant_types: ['authorization_code', GRANT],
      token_endpoint_auth_method: 'client_secret_basic',
    });
    expectOAuthError(withGrant, 'invalid_client_metadata');
    const reg = await postJson(stack.metadata.registration_endpoint, {
      client_name: 'dcr',
      redirect_uris: ['http://127.0.0.1/callback'],
      token_endpoint_auth_method: 'client_secret_basic',
    });
    const clientId = String(reg.body.client_id);
    const res = await token({ assertion: await jag({ client_id: clientId }) }, clientId, String(reg.body.client_secret));
    refused(res, 'unauthorized_client', /dynamically registered clients may not use the JWT bearer grant/);
  });

  it('a configured client not registered for the grant → unauthorized_client', async () => {
    refused(
      await token({ assertion: await jag({ client_id: 'not-for-idjag' }) }, 'not-for-idjag'),
      'unauthorized_client',
      /not registered for/,
    );
  });

  it('a wrong client secret never reaches the assertion checks (invalid_client), and the jti stays unused', async () => {
    const assertion = await jag();
    const res = await token({ assertion }, 'agent', 'wrong-secret-0123456789');
    expect(res.body.error).toBe('invalid_client');
    expect((await token({ assertion })).status).toBe(200);
  });

  describe('DPoP (RFC 9449; draft §8.6.2)', () => {
    const proofKey = async () => {
      const { privateKey, publicKey } = await generateKeyPair('ES256');
      const jwk = await exportJWK(publicKey);
      const proof = (claims: Record<string, unknown> = {}) =>
        new SignJWT({ htm: 'POST', htu: stack.metadata.token_endpoint, iat: Math.floor(Date.now() / 1000), jti: randomUUID(), ...claims })
          .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk })
          .sign(privateKey);
      return { jkt: await calculateJwkThumbprint(jwk), proof };
    };
    const dpopToken = (params: Record<string, string>, proof: string) =>
      postForm(
        stack.metadata.token_endpoint,
        { grant_type: GRANT, ...params },
        {
          authorization: `Basic ${Buffer.from(`agent:${SECRET}`).toString('base64')}`,
          dpop: proof,
        },
      );

    it('a valid proof binds the access token to its key (token_type DPoP, cnf.jkt)', async () => {
      const key = await proofKey();
      const res = await dpopToken({ assertion: await jag() }, await key.proof());
      expect(res.status, res.text).toBe(200);
      expect(res.body.token_type).toBe('DPoP');
      expect(decodeJwt(String(res.body.access_token)).cnf).toEqual({ jkt: key.jkt });
    });

    it('an invalid or replayed proof → invalid_dpop_proof', async () => {
      const key = await proofKey();
      refused(
        await dpopToken({ assertion: await jag() }, await key.proof({ htu: `${stack.issuer}/elsewhere` })),
        'invalid_dpop_proof',
        /not for POST to this token endpoint/,
      );
      refused(
        await dpopToken({ assertion: await jag() }, await key.proof({ iat: Math.floor(Date.now() / 1000) - 3600 })),
        'invalid_dpop_proof',
        /iat/,
      );
      refused(await dpopToken({ assertion: await jag() }, 'not.a.proof'), 'invalid_dpop_proof', /not a valid dpop\+jwt/);
      // RFC 9449 §4.2 / RFC 4648 §3.5: a valid proof spelt another way (jose would verify it)
      const fresh = await key.proof();
      refused(await dpopToken({ assertion: await jag() }, respeltSignature(fresh)), 'invalid_dpop_proof', /not a valid dpop\+jwt/);
      refused(
        await dpopToken({ assertion: await jag() }, `${fresh.slice(0, -12)} ${fresh.slice(-12)}`),
        'invalid_dpop_proof',
        /not a valid dpop\+jwt/,
      );
      const once = await key.proof();
      expect((await dpopToken({ assertion: await jag() }, once)).status).toBe(200);
      refused(await dpopToken({ assertion: await jag() }, once), 'invalid_dpop_proof', /already been used/);
    });

    it('an ID-JAG bound to a key (cnf.jkt) needs a proof by that key → invalid_grant otherwise', async () => {
      const key = await proofKey();
      const other = await proofKey();
      refused(await token({ assertion: await jag({ cnf: { jkt: key.jkt } }) }), 'invalid_grant', /proof of possession required/);
      refused(
        await dpopToken({ assertion: await jag({ cnf: { jkt: key.jkt } }) }, await other.proof()),
        'invalid_grant',
        /not the one the assertion is bound to/,
      );
      const ok = await dpopToken({ assertion: await jag({ cnf: { jkt: key.jkt } }) }, await key.proof());
      expect(ok.status, ok.text).toBe(200);
    });

    // Issue 40 finding 6. The draft (Sender Constraining Tokens, "ID-JAG Contains `cnf` Claim but
    // DPoP Proof is Not Presented"): "If the ID-JAG contains a `cnf` claim but the client does not
    // present a DPoP proof, the Resource Authorization Server MUST reject the request with an
    // `invalid_grant` error"; with a proof it compares the proof key with `cnf.jkt` only. A `cnf`
    // this server cannot check is refused, with or without a proof — never dropped (which would
    // redeem the assertion as a bearer assertion and hand out a Bearer token).
    const UNSUPPORTED_CNF: Array<[string, (jkt: string, jwk: JWK) => unknown]> = [
      ['RFC 7800 §3.2 cnf.jwk (even the proof key itself)', (_jkt, jwk) => ({ jwk })],
      ['RFC 7800 §3.3 cnf.jwe', () => ({ jwe: 'aaaa.bbbb.cccc.dddd.eeee' })],
      ['RFC 7800 §3.4 cnf.kid', () => ({ kid: 'key-1' })],
      ['RFC 7800 §3.5 cnf.jku', () => ({ jku: 'https://idp.example/keys.json' })],
      ['RFC 8705 §3.1 cnf.x5t#S256 (mTLS)', () => ({ 'x5t#S256': 'bwcK0esc3ACC3DB2Y5_lESsXE8o9ltc05O89jdN-dg2' })],
      ['cnf.jkt next to a method this server cannot check', (jkt) => ({ jkt, 'x5t#S256': 'bwcK0esc3ACC3DB2Y5_lESsXE8o9ltc05O89jdN-dg2' })],
      ['cnf.jkt as an array', (jkt) => ({ jkt: [jkt] })],
      ['cnf.jkt that is not a JWK SHA-256 thumbprint (RFC 9449 §6.1)', () => ({ jkt: 'abc' })],
      ['an empty cnf (no confirmation method)', () => ({})],
      ['a cnf that is not an object (RFC 7800 §3.1)', (jkt) => jkt],
      ['a cnf that is an array', (jkt) => [{ jkt }]],
    ];
    it.each(UNSUPPORTED_CNF)(
      '%s → invalid_grant without a proof and with one, audited cnf_unsupported; never a token',
      async (_name, cnf) => {
        const { privateKey, publicKey } = await generateKeyPair('ES256');
        const jwk = await exportJWK(publicKey);
        const jkt = await calculateJwkThumbprint(jwk);
        const proof = () =>
          new SignJWT({ htm: 'POST', htu: stack.metadata.token_endpoint, iat: Math.floor(Date.now() / 1000), jti: randomUUID() })
            .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk })
            .sign(privateKey);
        const before = events.filter((e) => e.audit === 'id_jag.refused' && e.reason === 'cnf_unsupported').length;
        for (const res of [
          await token({ assertion: await jag({ cnf: cnf(jkt, jwk) }) }),
          await dpopToken({ assertion: await jag({ cnf: cnf(jkt, jwk) }) }, await proof()),
        ]) {
          refused(res, 'invalid_grant', /cnf/);
          expect(res.body.access_token).toBeUndefined();
        }
        expect(events.filter((e) => e.audit === 'id_jag.refused' && e.reason === 'cnf_unsupported').length).toBe(before + 2);
      },
    );
  });

  it('every refusal is audited with the check that failed, never the assertion', () => {
    const refusals = events.filter((e) => e.audit === 'id_jag.refused');
    const reasons = new Set(refusals.map((e) => e.reason));
    for (const r of [
      'signature',
      'typ',
      'iss',
      'aud',
      'client_id',
      'resource',
      'exp',
      'replay',
      'scope',
      'account_disabled',
      'public_client',
      'cnf_unsupported',
    ]) {
      expect(reasons, r).toContain(r);
    }
    expect(JSON.stringify(events)).not.toMatch(/eyJ[\w-]+\.eyJ/);
  });
});
