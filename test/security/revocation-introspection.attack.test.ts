import { beforeAll, describe, expect, it } from 'vitest';
import { expectOAuthError, fullFlow, postForm, refresh, registerClient, useAttackStack } from './helpers/support.js';

/**
 * Revocation and introspection used against other clients' tokens (RFC 7009 §2.1: the AS
 * checks the token was issued to the requesting client; RFC 7662 §2.1, §4: the endpoint
 * requires authorization and must not become a token-scanning oracle).
 */
describe("attack: revocation and introspection of another client's tokens", () => {
  const stack = useAttackStack();
  let victim: string;
  let attacker: string;
  beforeAll(async () => {
    [victim, attacker] = await Promise.all([registerClient(stack), registerClient(stack)]);
  });

  /** RFC 7009 §2.1 revocation request for a refresh token, sent by the public client `clientId`. */
  const revokeRefreshToken = (token: string, clientId: string) =>
    postForm(stack.metadata.revocation_endpoint!, { token, token_type_hint: 'refresh_token', client_id: clientId });

  it("RFC 7009 §2.1: another client cannot revoke the victim's refresh token (it keeps working)", async () => {
    const tokens = await fullFlow(stack, victim);
    const res = await revokeRefreshToken(tokens.refresh_token!, attacker);
    // RFC 7009 §2.2: invalid tokens answer 200 too; either way nothing may happen to the token.
    expect(res.status).toBeLessThan(500);
    const still = await refresh(stack, victim, tokens.refresh_token!);
    expect(still.status, still.text).toBe(200);
  });

  it('RFC 7009: the owner can revoke its refresh token, which then stops working', async () => {
    const tokens = await fullFlow(stack, victim);
    const res = await revokeRefreshToken(tokens.refresh_token!, victim);
    expect(res.status).toBe(200);
    const after = await refresh(stack, victim, tokens.refresh_token!);
    expectOAuthError(after, 'invalid_grant');
  });

  it("RFC 7662 §2.1/§4: a public client cannot use introspection to learn about tokens (no active:true for anyone's token)", async () => {
    const tokens = await fullFlow(stack, victim);
    for (const [client, token] of [
      [attacker, tokens.refresh_token!],
      [victim, tokens.refresh_token!],
      [attacker, tokens.access_token],
    ] as const) {
      const res = await postForm(stack.metadata.introspection_endpoint!, { token, client_id: client });
      expect(res.status).toBeLessThan(500);
      expect(
        res.body.active === true && res.body.client_id === victim && client === attacker,
        'introspection leaked the victim token to another client',
      ).toBe(false);
      if (client === attacker) expect(res.body.active === true).toBe(false);
    }
  });

  it("revocation endpoint does not distinguish unknown tokens from others' tokens (no oracle)", async () => {
    const tokens = await fullFlow(stack, victim);
    const foreign = await postForm(stack.metadata.revocation_endpoint!, { token: tokens.refresh_token!, client_id: attacker });
    const unknown = await postForm(stack.metadata.revocation_endpoint!, { token: 'x'.repeat(43), client_id: attacker });
    expect(foreign.status).toBe(unknown.status);
    expect(foreign.body.error).toBe(unknown.body.error);
  });
});
