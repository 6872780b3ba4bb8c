/**
 * RFC 9449 §4.2 / §4.3 at the authorization server: a `DPoP` header that is not a signed compact
 * JWS in its one spelling ({@link isCanonicalSignedJws}) is refused. jose, under oidc-provider's
 * proof check and the ID-JAG grant's, skips whitespace inside a segment and ignores the unused
 * bits of the signature's last character, so other spellings of a valid proof verified.
 *
 * The header is replaced, before routing, by a value no proof check accepts, so each endpoint
 * refuses it as it refuses any invalid proof (400 `invalid_dpop_proof` at the token endpoint),
 * with its own error event: the refusal goes through the checks that already know each
 * endpoint's answer. An empty header means "no proof" and is left alone.
 */
import { isCanonicalSignedJws } from '@mcp-auth-kit/protocol';
import type Provider from 'oidc-provider';

/** What a proof spelt any other way is replaced with: not a JWS, so every proof check refuses it. */
export const NOT_A_PROOF = 'non-canonical-dpop-proof';

export function installDpopProofShape(provider: Provider): void {
  provider.use(async (ctx, next) => {
    const proof = ctx.get('dpop');
    if (proof !== '' && !isCanonicalSignedJws(proof)) ctx.req.headers.dpop = NOT_A_PROOF;
    await next();
  });
}
