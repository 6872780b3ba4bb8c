/**
 * The subject token of a token exchange (RFC 8693 §2.1: `subject_token`): the MCP access token the
 * calling MCP server received. It must be one of OUR access tokens (own-access-tokens.ts: signature,
 * `typ`, `iss`, `exp`), issued to a user (a grant, not client credentials), for the calling
 * client's own resource (`aud`: a server never exchanges a token meant for another), from a grant
 * that is still live (not revoked), for an account that may still act (account-state.ts). Every
 * failure is `invalid_grant` (RFC 8693 §2.2.2) with a description that names the check, never the token.
 *
 * DPoP: a subject token bound to the MCP client's key (`cnf.jkt`) is accepted without a proof of
 * that key. The resource server verified the proof when it accepted the token (RFC 9449 §7.1),
 * and only that server can present it here: it authenticates as the confidential client whose
 * resource is the token's audience. Whoever steals the bound token has neither the key nor the
 * server's credentials.
 */
import type Provider from 'oidc-provider';
import { usableAccount } from '../../accounts/account-state.js';
import { grantIsLive, type OwnAccessToken } from '../../tokens/own-access-tokens.js';
import type { Store } from '../../storage/types.js';
import { refuse } from '../refusal.js';

export interface SubjectCheck {
  provider: Provider;
  store: Store;
  production: boolean;
  verify: (token: string) => Promise<OwnAccessToken | undefined>;
}

/** The account the subject token was issued to, after every check. */
export async function subjectAccount(check: SubjectCheck, subjectToken: string, resource: string): Promise<string> {
  const token = await check.verify(subjectToken);
  if (!token)
    return refuse('invalid_grant', 'subject_token', 'the subject_token is not a valid access token of this server (RFC 8693 §2.2.2)');
  if (token.grantId === undefined || typeof token.payload.sub !== 'string')
    return refuse('invalid_grant', 'subject_userless', 'the subject_token names no user (a client credentials token)');
  const aud = token.payload.aud;
  if (!(aud === resource || (Array.isArray(aud) && aud.length === 1 && aud[0] === resource)))
    return refuse('invalid_grant', 'subject_audience', "the subject_token was not issued for this client's resource");
  if (!(await grantIsLive(check.provider, token)))
    return refuse('invalid_grant', 'subject_revoked', "the subject_token's grant has ended (revoked or expired)");
  if (!(await usableAccount(check.store, token.payload.sub, { production: check.production })))
    return refuse('invalid_grant', 'subject_account', "the subject_token's account is disabled or gone");
  return token.payload.sub;
}
