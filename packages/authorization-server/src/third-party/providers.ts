/**
 * The AS as an OAuth client of each third-party provider (openid-client): discovery (RFC 8414,
 * then OpenID Connect Discovery, in the MCP order of @mcp-auth-kit/protocol, the `issuer` of the
 * document compared with the configured one, RFC 8414 §3.3) or the operator's explicit
 * endpoints; the authorization request with PKCE S256 and `state` (RFC 7636, RFC 6749 §10.12);
 * the callback's checks (state, RFC 9207 `iss`, error responses) and the code exchange; refresh
 * (RFC 6749 §6); revocation (RFC 7009). Every request goes through the egress policy, one fetcher
 * per provider, and keeps nothing but that provider's configuration in memory.
 */
import * as oidc from 'openid-client';
import { authorizationServerMetadataUrls, isAccessTokenSyntax, oauthErrorCode, splitScope, tokenLifetime } from '@mcp-auth-kit/protocol';
import type { ResolvedThirdPartyConfig } from '../config/types.js';
import { createEgressFetch, upstreamEgressPolicy, type EgressFetch } from '../http/egress.js';
import type { Logger } from '../ops/logger.js';
import type { ProviderTokens } from './vault.js';

export type ResolvedProvider = ResolvedThirdPartyConfig['providers'][string] & { name: string };

/** A refusal by the provider (an OAuth `error`), or a failure to reach or understand it. */
export class ProviderError extends Error {
  constructor(
    /**
     * The provider's OAuth `error` code (charset-checked), or `unreachable` / `invalid_response`,
     * or `foreign_callback` for a callback whose `state` is not this flow's.
     */
    readonly error: string,
    /** Which check failed, for logs (never a token). */
    readonly reason: string,
  ) {
    super(`${error}: ${reason}`);
    this.name = 'ProviderError';
  }
}

/** How long the user (or a token exchange) waits for a provider answer. */
const TIMEOUT_SECONDS = 10;
/** A token that expires within this margin is refreshed before it is handed out. */
export const EXPIRY_MARGIN_SECONDS = 30;

/**
 * openid-client's failures as ours: an OAuth error the provider sent keeps its code; a response
 * that fails a check (state, iss, the token response's shape) is `invalid_response` with
 * openid-client's code and message (they name the check, never the value); anything else is
 * `unreachable`.
 */
function classify(err: unknown): ProviderError {
  if (err instanceof ProviderError) return err;
  const e = err as { error?: unknown; code?: unknown; message?: unknown };
  if (typeof e.error === 'string') return new ProviderError(oauthErrorCode(e.error), 'the provider answered with an error');
  if (typeof e.code === 'string' && e.code.startsWith('OAUTH_'))
    return new ProviderError('invalid_response', `${e.code}: ${String(e.message ?? '').slice(0, 200)}`);
  return new ProviderError('unreachable', err instanceof Error ? `${err.name}: ${err.message.slice(0, 200)}` : 'error');
}

export class ThirdPartyProviders {
  private readonly byName = new Map<string, ResolvedProvider>();
  private readonly configs = new Map<string, Promise<oidc.Configuration>>();
  private readonly fetches = new Map<string, EgressFetch>();

  constructor(
    config: ResolvedThirdPartyConfig,
    private readonly o: { logger: Logger; redirectUri: string },
  ) {
    for (const [name, p] of Object.entries(config.providers)) this.byName.set(name, { ...p, name });
  }

  get(name: string): ResolvedProvider | undefined {
    return this.byName.get(name);
  }

  /** Whether the MCP server `resource` may use the provider (`thirdParty.providers.<name>.resources`). */
  mayUse(name: string, resource: string): boolean {
    return this.byName.get(name)?.resources.includes(resource) === true;
  }

  /** The peer whose address class decides the egress policy: the issuer, else the token endpoint. */
  private egress(p: ResolvedProvider): EgressFetch {
    let fetcher = this.fetches.get(p.name);
    if (!fetcher) {
      fetcher = createEgressFetch({
        policy: upstreamEgressPolicy((p.issuer ?? p.tokenEndpoint)!, p.allowPrivateNetwork),
        logger: this.o.logger,
        purpose: `third-party:${p.name}`,
      });
      this.fetches.set(p.name, fetcher);
    }
    return fetcher;
  }

  /** RFC 8414 §3: the metadata document at the first well-known URL that has one, for exactly this issuer. */
  private async discover(p: ResolvedProvider, fetcher: EgressFetch): Promise<oidc.ServerMetadata> {
    for (const url of authorizationServerMetadataUrls(p.issuer!)) {
      const res = await fetcher(url, {
        redirect: 'manual',
        headers: { accept: 'application/json' },
        signal: AbortSignal.timeout(TIMEOUT_SECONDS * 1000),
      });
      if (res.status === 404) continue;
      if (res.status !== 200) throw new ProviderError('invalid_response', `metadata answered HTTP ${res.status}`);
      const metadata = (await res.json()) as unknown;
      if (!metadata || typeof metadata !== 'object' || Array.isArray(metadata))
        throw new ProviderError('invalid_response', 'metadata is not a JSON object');
      // RFC 8414 §3.3: the document is only used for the issuer it names, compared as a string.
      if ((metadata as { issuer?: unknown }).issuer !== p.issuer) throw new ProviderError('invalid_response', 'metadata issuer mismatch');
      return metadata as oidc.ServerMetadata;
    }
    throw new ProviderError('invalid_response', 'no authorization server metadata found');
  }

  private async build(p: ResolvedProvider): Promise<oidc.Configuration> {
    const fetcher = this.egress(p);
    const found: oidc.ServerMetadata =
      p.authorizationEndpoint && p.tokenEndpoint
        ? {
            // Without a configured issuer an `iss` in a response cannot be compared: see checkIss.
            issuer: p.issuer ?? `urn:mcp-auth-kit:third-party:${p.name}`,
            authorization_endpoint: p.authorizationEndpoint,
            token_endpoint: p.tokenEndpoint,
          }
        : await this.discover(p, fetcher);
    const server = p.revocationEndpoint ? { ...found, revocation_endpoint: p.revocationEndpoint } : found;
    const auth =
      p.tokenEndpointAuthMethod === 'none'
        ? oidc.None()
        : p.tokenEndpointAuthMethod === 'client_secret_post'
          ? oidc.ClientSecretPost(p.clientSecret)
          : oidc.ClientSecretBasic(p.clientSecret);
    const config = new oidc.Configuration(server, p.clientId, undefined, auth);
    config[oidc.customFetch] = (url, options) => fetcher(url, options as RequestInit);
    config.timeout = TIMEOUT_SECONDS;
    // Validated at start-up: plain http only for a loopback provider on a loopback AS (development);
    // what a discovery document names never turns it on.
    if (new URL((p.issuer ?? p.tokenEndpoint)!).protocol === 'http:') oidc.allowInsecureRequests(config);
    return config;
  }

  /** The provider's client configuration; a failed discovery is not kept, so the next use tries again. */
  private configuration(p: ResolvedProvider): Promise<oidc.Configuration> {
    let pending = this.configs.get(p.name);
    if (!pending) {
      pending = this.build(p);
      pending.catch(() => this.configs.delete(p.name));
      this.configs.set(p.name, pending);
    }
    return pending.catch((err: unknown) => Promise.reject(classify(err)));
  }

  /** The origin the confirmation form's redirect ends at (the connect page's CSP form-action). */
  async authorizationOrigin(p: ResolvedProvider): Promise<string> {
    const endpoint = (await this.configuration(p)).serverMetadata().authorization_endpoint;
    if (!endpoint) throw new ProviderError('invalid_response', 'no authorization_endpoint');
    return new URL(endpoint).origin;
  }

  /** The authorization request (RFC 6749 §4.1.1) with PKCE S256 and `state`. */
  async authorizationUrl(p: ResolvedProvider, state: string, codeVerifier: string): Promise<URL> {
    const config = await this.configuration(p);
    return oidc.buildAuthorizationUrl(config, {
      redirect_uri: this.o.redirectUri,
      ...(p.scopes.length && { scope: p.scopes.join(' ') }),
      code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state,
    });
  }

  /**
   * RFC 9207 §2.4: with explicit endpoints and no configured issuer there is nothing to compare an
   * `iss` with; a response that carries one is refused rather than taken on trust.
   */
  private checkIss(p: ResolvedProvider, query: URLSearchParams): void {
    if (!p.issuer && query.has('iss')) throw new ProviderError('invalid_response', 'iss sent but no issuer configured to compare it with');
  }

  /**
   * The callback (RFC 6749 §4.1.2): `state`, then `iss` (RFC 9207), then an error response, then
   * the code exchange with the PKCE verifier (openid-client makes these checks in this order).
   */
  async exchangeCode(
    p: ResolvedProvider,
    query: URLSearchParams,
    checks: { state: string; codeVerifier: string },
  ): Promise<ProviderTokens> {
    // RFC 6749 §10.12: a callback with another flow's state is the browser's (or an attacker's)
    // mistake, not the provider's: told apart here, before openid-client checks it again.
    if (query.get('state') !== checks.state) throw new ProviderError('foreign_callback', "state is not this flow's");
    try {
      this.checkIss(p, query);
      const config = await this.configuration(p);
      const current = new URL(this.o.redirectUri);
      current.search = query.toString();
      const tokens = await oidc.authorizationCodeGrant(config, current, {
        pkceCodeVerifier: checks.codeVerifier,
        expectedState: checks.state,
      });
      return this.tokens(p, tokens, undefined);
    } catch (err) {
      throw classify(err);
    }
  }

  /** RFC 6749 §6; a rotated refresh token replaces the old one, else the old one is kept (§6 last paragraph). */
  async refresh(p: ResolvedProvider, current: ProviderTokens): Promise<ProviderTokens> {
    if (!current.refreshToken) throw new ProviderError('invalid_grant', 'no refresh token');
    try {
      const config = await this.configuration(p);
      return this.tokens(p, await oidc.refreshTokenGrant(config, current.refreshToken), current);
    } catch (err) {
      throw classify(err);
    }
  }

  /** RFC 7009, when the provider has an endpoint: best effort (the connection is gone here either way). */
  async revoke(p: ResolvedProvider, tokens: ProviderTokens): Promise<boolean> {
    try {
      const config = await this.configuration(p);
      if (!config.serverMetadata().revocation_endpoint) return false;
      const [token, hint] = tokens.refreshToken ? [tokens.refreshToken, 'refresh_token'] : [tokens.accessToken, 'access_token'];
      await oidc.tokenRevocation(config, token, { token_type_hint: hint });
      return true;
    } catch (err) {
      this.o.logger.warn('third-party token revocation failed', { provider: p.name, reason: classify(err).error });
      return false;
    }
  }

  /** The vault's view of a token response, checked (RFC 6749 §5.1). */
  private tokens(
    p: ResolvedProvider,
    response: oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers,
    previous: ProviderTokens | undefined,
  ): ProviderTokens {
    if (!isAccessTokenSyntax(response.access_token))
      throw new ProviderError('invalid_response', 'access_token is not a token (RFC 6750 §2.1)');
    // The MCP server sends it as a bearer token: a sender-constrained type would need a key it has not got.
    if (String(response.token_type).toLowerCase() !== 'bearer')
      throw new ProviderError('invalid_response', 'token_type is not Bearer (RFC 6750)');
    const lifetime = tokenLifetime(response.expires_in);
    // §5.1: scope is OPTIONAL if identical to the requested scope.
    const scopes = typeof response.scope === 'string' ? splitScope(response.scope) : (previous?.scopes ?? p.scopes);
    const refreshToken = typeof response.refresh_token === 'string' ? response.refresh_token : previous?.refreshToken;
    const subject = response.id_token ? response.claims()?.sub : previous?.providerSubject;
    return {
      accessToken: response.access_token,
      tokenType: 'Bearer',
      scopes,
      ...(refreshToken !== undefined && { refreshToken }),
      ...(lifetime !== undefined && { expiresAt: Math.floor(Date.now() / 1000) + lifetime }),
      ...(subject !== undefined && { providerSubject: subject }),
    };
  }
}
