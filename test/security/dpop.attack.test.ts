import { randomUUID, createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignJWT, calculateJwkThumbprint, decodeJwt, exportJWK, generateKeyPair, type CryptoKey, type JWK } from 'jose';
import { authorizeCode, codeGrantForm, pkcePair, registerClient, startAttackStack, type AttackStack } from './helpers/support.js';

/**
 * DPoP downgrade and proof attacks end to end (RFC 9449 §4.3, §7.1, §7.2, §11.1): a token bound
 * to a key by our AS, presented to the demo MCP server (DPoP on by default).
 */
describe('attack: DPoP-bound tokens at the MCP server', () => {
  let stack: AttackStack;
  let key: { privateKey: CryptoKey; publicJwk: JWK };
  let token: string;

  const proof = async (
    signer: { privateKey: CryptoKey; publicJwk: JWK },
    claims: { htm: string; htu: string; ath?: string; nonce?: string; iat?: number; jti?: string },
  ) =>
    new SignJWT({
      jti: claims.jti ?? randomUUID(),
      htm: claims.htm,
      htu: claims.htu,
      iat: claims.iat ?? Math.floor(Date.now() / 1000),
      ...(claims.ath && { ath: claims.ath }),
      ...(claims.nonce && { nonce: claims.nonce }),
    })
      .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: signer.publicJwk })
      .sign(signer.privateKey);

  const newKey = async () => {
    const pair = await generateKeyPair('ES256', { extractable: true });
    return { privateKey: pair.privateKey, publicJwk: await exportJWK(pair.publicKey) };
  };

  const ath = (t: string) => createHash('sha256').update(t).digest('base64url');

  /** POST /mcp tools/call whoami with the given Authorization and DPoP headers; handles one nonce round. */
  async function call(authorization: string, makeProof?: (nonce?: string) => Promise<string>) {
    const send = async (nonce?: string) =>
      fetch(stack.mcpUrl, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-11-25',
          authorization,
          ...(makeProof && { dpop: await makeProof(nonce) }),
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'whoami', arguments: {} } }),
      });
    let res = await send();
    const nonce = res.headers.get('dpop-nonce');
    if (res.status === 401 && nonce && makeProof && /use_dpop_nonce/.test(res.headers.get('www-authenticate') ?? '')) {
      await res.arrayBuffer();
      res = await send(nonce);
    }
    const text = await res.text();
    return { status: res.status, challenge: res.headers.get('www-authenticate') ?? '', text };
  }

  beforeAll(async () => {
    stack = await startAttackStack();
    key = await newKey();
    const clientId = await registerClient(stack);
    const { verifier, challenge } = pkcePair();
    const code = (await authorizeCode(stack, { clientId, challenge })).get('code')!;
    const form = codeGrantForm({ code, clientId, verifier, resource: stack.mcpUrl });
    const tokenCall = async (nonce?: string) =>
      fetch(stack.metadata.token_endpoint, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          dpop: await proof(key, { htm: 'POST', htu: stack.metadata.token_endpoint, nonce }),
        },
        body: new URLSearchParams(form).toString(),
      });
    let res = await tokenCall();
    if (res.status === 400 && res.headers.get('dpop-nonce')) {
      await res.arrayBuffer();
      res = await tokenCall(res.headers.get('dpop-nonce')!);
    }
    const body = (await res.json()) as { access_token?: string; token_type?: string; error?: string };
    if (res.status !== 200 || !body.access_token) throw new Error(`DPoP token request failed: ${res.status} ${body.error}`);
    expect(body.token_type?.toLowerCase()).toBe('dpop');
    token = body.access_token;
  });
  afterAll(async () => stack?.close());

  it('the AS binds the token to the proof key (cnf.jkt, RFC 9449 §6.1)', async () => {
    const claims = decodeJwt(token) as { cnf?: { jkt?: string } };
    expect(claims.cnf?.jkt).toBe(await calculateJwkThumbprint(key.publicJwk));
  });

  it('baseline: DPoP scheme + a fresh proof with ath from the bound key → 200', async () => {
    const res = await call(`DPoP ${token}`, (nonce) => proof(key, { htm: 'POST', htu: stack.mcpUrl, ath: ath(token), nonce }));
    expect(res.status, res.challenge).toBe(200);
  });

  it('RFC 9449 §7.2 downgrade: the bound token presented as a plain Bearer token → 401', async () => {
    const res = await call(`Bearer ${token}`);
    expect(res.status).toBe(401);
  });

  it('downgrade with a proof attached but the Bearer scheme → 401 (or 400)', async () => {
    const res = await call(`Bearer ${token}`, (nonce) => proof(key, { htm: 'POST', htu: stack.mcpUrl, ath: ath(token), nonce }));
    expect([400, 401]).toContain(res.status);
  });

  it('DPoP scheme without a proof → 401 (or 400), challenge names the DPoP scheme', async () => {
    const res = await call(`DPoP ${token}`);
    expect([400, 401]).toContain(res.status);
    expect(res.challenge).toMatch(/DPoP/);
  });

  it("stolen token: proof signed by the attacker's own key → 401 invalid_dpop_proof / invalid_token", async () => {
    const attacker = await newKey();
    const res = await call(`DPoP ${token}`, (nonce) => proof(attacker, { htm: 'POST', htu: stack.mcpUrl, ath: ath(token), nonce }));
    expect(res.status).toBe(401);
    expect(res.challenge).toMatch(/invalid_dpop_proof|invalid_token/);
  });

  it('proof for another method, another URL, without ath, with a wrong ath, or stale → 401', async () => {
    const variants: Array<(nonce?: string) => Promise<string>> = [
      (nonce) => proof(key, { htm: 'GET', htu: stack.mcpUrl, ath: ath(token), nonce }),
      (nonce) => proof(key, { htm: 'POST', htu: `${new URL(stack.mcpUrl).origin}/other`, ath: ath(token), nonce }),
      (nonce) => proof(key, { htm: 'POST', htu: stack.mcpUrl, nonce }),
      (nonce) => proof(key, { htm: 'POST', htu: stack.mcpUrl, ath: ath(`${token}x`), nonce }),
      (nonce) => proof(key, { htm: 'POST', htu: stack.mcpUrl, ath: ath(token), nonce, iat: Math.floor(Date.now() / 1000) - 3600 }),
    ];
    for (const [i, make] of variants.entries()) {
      const res = await call(`DPoP ${token}`, make);
      expect([400, 401], `variant ${i}`).toContain(res.status);
    }
  });

  it('RFC 9449 §11.1: a replayed proof (same jti) is refused the second time', async () => {
    const first = await call(`DPoP ${token}`, (nonce) => proof(key, { htm: 'POST', htu: stack.mcpUrl, ath: ath(token), nonce }));
    expect(first.status).toBe(200);
    // Capture one proof and send it twice (with the nonce the server currently wants, if any).
    let captured: string | undefined;
    const firstUse = await call(
      `DPoP ${token}`,
      async (nonce) => (captured = await proof(key, { htm: 'POST', htu: stack.mcpUrl, ath: ath(token), nonce, jti: randomUUID() })),
    );
    expect(firstUse.status).toBe(200);
    const replay = await call(`DPoP ${token}`, async () => captured!);
    expect(replay.status).toBe(401);
  });
});
