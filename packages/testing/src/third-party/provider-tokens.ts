/**
 * The provider's grants and the credentials issued under them, in memory: authorization codes
 * (single-use, short-lived, bound to client, redirect URI and PKCE challenge), opaque access
 * tokens, and refresh tokens that rotate on every use, where the reuse of a spent one revokes
 * the whole grant (OAuth 2.1 §4.3.1, RFC 9700 §4.14.2).
 */
import { randomBytes } from 'node:crypto';
import type { ThirdPartyGrant } from './provider-options.js';

/** What the authorization endpoint approved, waiting for the token request. */
export interface CodeRequest {
  clientId: string;
  username: string;
  scopes: string[];
  redirectUri: string;
  /** RFC 6749 §4.1.3: the token request must repeat redirect_uri when the authorization request had it. */
  redirectUriSent: boolean;
  codeChallenge: string;
}

interface Grant extends ThirdPartyGrant {
  id: string;
}

interface Code extends CodeRequest {
  expiresAt: number;
  /** Set when redeemed: a second redemption revokes what the first one got (RFC 6749 §4.1.2). */
  grantId?: string;
}

interface AccessToken {
  grantId: string;
  scopes: string[];
  expiresAt: number;
}

interface RefreshToken {
  grantId: string;
  /** Spent by a rotation: presenting it again is a replay. */
  spent: boolean;
}

export interface IssuedTokens {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
}

export type RefreshOutcome =
  | { ok: true; tokens: IssuedTokens }
  | { ok: false; error: 'invalid_grant' | 'invalid_scope'; description: string };

export interface LiveAccessToken {
  username: string;
  clientId: string;
  scopes: string[];
}

const opaque = () => randomBytes(32).toString('base64url');

export class ProviderTokens {
  private readonly grantsById = new Map<string, Grant>();
  private readonly codes = new Map<string, Code>();
  private readonly accessTokens = new Map<string, AccessToken>();
  private readonly refreshTokens = new Map<string, RefreshToken>();

  constructor(private readonly lifetimes: { accessToken: number; code: number }) {}

  issueCode(request: CodeRequest): string {
    const code = opaque();
    this.codes.set(code, { ...request, scopes: [...request.scopes], expiresAt: Date.now() + this.lifetimes.code * 1000 });
    return code;
  }

  /**
   * The code's request, once: a code that is unknown, expired, spent, or issued to another client
   * is refused (`undefined`); presenting a spent code again also revokes its grant. The caller
   * checks PKCE and redirect_uri, then calls `redeem()`, or `discard()` when they fail (a code
   * gets one try: no guessing of verifiers).
   */
  redeemCode(code: string, clientId: string): (CodeRequest & { redeem(): IssuedTokens; discard(): void }) | undefined {
    const entry = this.codes.get(code);
    if (!entry) return undefined;
    if (entry.grantId !== undefined) {
      this.revokeGrant(entry.grantId);
      return undefined;
    }
    if (entry.clientId !== clientId || entry.expiresAt <= Date.now()) return undefined;
    return {
      ...entry,
      discard: () => void this.codes.delete(code),
      redeem: () => {
        const id = opaque();
        this.grantsById.set(id, { id, username: entry.username, clientId, scopes: entry.scopes });
        entry.grantId = id;
        return this.issue(id, entry.scopes);
      },
    };
  }

  refresh(token: string, clientId: string, requested: string[] | undefined): RefreshOutcome {
    const entry = this.refreshTokens.get(token);
    const grant = entry && this.grantsById.get(entry.grantId);
    if (!entry || !grant || grant.clientId !== clientId) {
      return { ok: false, error: 'invalid_grant', description: 'the refresh token is not valid' };
    }
    if (entry.spent) {
      this.revokeGrant(grant.id);
      return { ok: false, error: 'invalid_grant', description: 'the refresh token was already used; the grant is revoked' };
    }
    // RFC 6749 §6: a refresh may narrow the scope of the access token, never beyond the grant's.
    const scopes = requested ?? grant.scopes;
    const beyond = scopes.filter((s) => !grant.scopes.includes(s));
    if (beyond.length) return { ok: false, error: 'invalid_scope', description: `not granted: ${beyond.join(' ')}` };
    entry.spent = true;
    return { ok: true, tokens: this.issue(grant.id, scopes) };
  }

  /** The access token's owner and scopes while it is live (known, unexpired, its grant not revoked). */
  accessToken(token: string): LiveAccessToken | undefined {
    const entry = this.accessTokens.get(token);
    const grant = entry && this.grantsById.get(entry.grantId);
    if (!entry || !grant || entry.expiresAt <= Date.now()) return undefined;
    return { username: grant.username, clientId: grant.clientId, scopes: entry.scopes };
  }

  /**
   * RFC 7009 §2.1: revokes a token of `clientId`. A refresh token takes its grant (and every
   * access token of it) along; an access token goes alone. `'foreign'`: another client's token.
   */
  revoke(token: string, clientId: string): 'revoked' | 'unknown' | 'foreign' {
    const refresh = this.refreshTokens.get(token);
    const access = this.accessTokens.get(token);
    const grantId = refresh?.grantId ?? access?.grantId;
    const grant = grantId === undefined ? undefined : this.grantsById.get(grantId);
    if (!grant) return 'unknown';
    if (grant.clientId !== clientId) return 'foreign';
    if (refresh) this.revokeGrant(grant.id);
    else this.accessTokens.delete(token);
    return 'revoked';
  }

  grants(username?: string): ThirdPartyGrant[] {
    return [...this.grantsById.values()]
      .filter((g) => username === undefined || g.username === username)
      .map(({ username, clientId, scopes }) => ({ username, clientId, scopes: [...scopes] }));
  }

  revokeUser(username: string): number {
    const ids = [...this.grantsById.values()].filter((g) => g.username === username).map((g) => g.id);
    for (const id of ids) this.revokeGrant(id);
    return ids.length;
  }

  private issue(grantId: string, scopes: string[]): IssuedTokens {
    const access = opaque();
    const refresh = opaque();
    this.accessTokens.set(access, { grantId, scopes, expiresAt: Date.now() + this.lifetimes.accessToken * 1000 });
    this.refreshTokens.set(refresh, { grantId, spent: false });
    return {
      access_token: access,
      token_type: 'Bearer',
      expires_in: this.lifetimes.accessToken,
      refresh_token: refresh,
      scope: scopes.join(' '),
    };
  }

  private revokeGrant(grantId: string): void {
    this.grantsById.delete(grantId);
    for (const [token, entry] of this.accessTokens) if (entry.grantId === grantId) this.accessTokens.delete(token);
    for (const [token, entry] of this.refreshTokens) if (entry.grantId === grantId) this.refreshTokens.delete(token);
  }
}
