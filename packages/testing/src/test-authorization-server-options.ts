/** The public shapes of the test authorization server: its options, the tokens it issues, its handle. */
import type { AuthorizationServer, AuthorizationServerConfig, Logger, Store } from '@mcp-auth-kit/authorization-server';
import type { ClientMetadataHost } from './client-metadata-host.js';
import type { AsEndpoints, TokenResponse } from './code-flow.js';
import type { AccessTokenClaims } from './jwt.js';

export interface TestUser {
  username: string;
  /** Typed into the login page when auto-login is off (default: a random one, see `passwordOf`). */
  password?: string;
  displayName?: string;
}

export interface StartTestAuthorizationServerOptions {
  /** Protected resources: resource URI → its scopes (a list, or scope → consent description). */
  resources: Record<string, readonly string[] | Record<string, string>>;
  /** Accounts; in the test AS an account's `sub` is its username. Default: one user `test-user`. */
  users?: readonly (TestUser | string)[];
  /** Extra pre-registered clients (oidc-provider / RFC 7591 metadata). */
  clients?: NonNullable<AuthorizationServerConfig['clients']>;
  /**
   * Sign users in and approve consent without pages (default true). `true` auto-logs in the
   * first user, or the user named by `login_hint`; a username picks the default user; `false`
   * makes the helpers fill in the real login and consent forms.
   */
  autoLogin?: boolean | string;
  /** Host name in the issuer (default `127.0.0.1`; the server always listens on 127.0.0.1). */
  hostname?: '127.0.0.1' | 'localhost';
  /** Default access token lifetime in seconds (default 300). */
  accessTokenTTL?: number;
  /**
   * CIMD: a loopback HTTPS host for client metadata documents is trusted by the AS (default
   * true; generates a self-signed certificate at start).
   */
  cimd?: boolean;
  /** Receives the AS's logs (default: silent). */
  logger?: Logger;
  /** Any other AS option, merged last (expert use). */
  config?: Partial<AuthorizationServerConfig>;
}

export interface TokenRequestOptions {
  /** Resource URI (RFC 8707); default: the only configured resource. */
  resource?: string;
  /** Scopes to request; default: every scope of the resource. */
  scopes?: readonly string[];
  /** Username whose token this is (default: the default user). */
  subject?: string;
  /** Access token lifetime in seconds for this token (default: the AS's). */
  lifetime?: number;
}

export interface AuthorizeOptions extends TokenRequestOptions {
  /** client_id (a registered id or a CIMD URL) or a client; default the kit's public client. */
  client?: string | TestClient;
  /** Extra authorization request parameters. */
  params?: Record<string, string>;
}

export interface TestClient {
  clientId: string;
  clientSecret?: string;
  /** Default `http://127.0.0.1/callback` (nothing listens there: the flow stops at the redirect). */
  redirectUri?: string;
}

export interface RegisteredClient extends TestClient {
  redirectUri: string;
  /** The registration response (RFC 7591 §3.2.1). */
  registration: Record<string, unknown>;
}

export interface IssuedTokens extends TokenResponse {
  /** The access token's (unverified) payload. */
  claims: AccessTokenClaims;
}

export interface RotatedKeys {
  /** kid that signed until now (still published until it retires). */
  previousKid: string | undefined;
  /** kid that signs from now on. */
  currentKid: string | undefined;
}

export interface TestAuthorizationServer {
  /** Issuer identifier, e.g. `http://127.0.0.1:41234`. */
  issuer: string;
  port: number;
  /** The AS's RFC 8414 metadata. */
  metadata: AsEndpoints;
  /** The running AS (replaced by `rotateKeys`). */
  readonly authorizationServer: AuthorizationServer;
  store: Store;
  /** The kit's pre-registered public client (`authorization_code` + `refresh_token`, PKCE). */
  defaultClient: Required<Omit<TestClient, 'clientSecret'>>;
  /** Runs the authorization code flow with PKCE and returns the token response. */
  authorize(options?: AuthorizeOptions): Promise<IssuedTokens>;
  /** `authorize` that returns just the access token. */
  issueAccessToken(options?: TokenRequestOptions): Promise<string>;
  /** refresh_token grant (the refresh token rotates). */
  refresh(
    refreshToken: string,
    options?: { client?: string | TestClient; resource?: string; scopes?: readonly string[] },
  ): Promise<IssuedTokens>;
  /**
   * RFC 7009 revocation at the AS. Refresh tokens (and their grant) are revoked; the AS's JWT
   * access tokens cannot be (rejects with error `unsupported_token_type`).
   */
  revoke(token: string, options?: { client?: string | TestClient; hint?: 'access_token' | 'refresh_token' }): Promise<void>;
  /** RFC 7662 introspection of a refresh token or a JWT access token (inactive once its grant is revoked). */
  introspect(token: string, options?: { client?: string | TestClient }): Promise<Record<string, unknown>>;
  /** Rotates the signing keys in the store and restarts the AS in place (same port, same store). */
  rotateKeys(options?: { retireAfterSeconds?: number }): Promise<RotatedKeys>;
  /**
   * RFC 7591 Dynamic Client Registration at the AS's registration endpoint. Defaults: a public
   * native client with the kit's redirect URI and the authorization_code + refresh_token grants.
   */
  registerClient(metadata?: Record<string, unknown>): Promise<RegisteredClient>;
  /** The loopback HTTPS host for CIMD documents (started on first use; trusted by this AS). */
  clientMetadataHost(): Promise<ClientMetadataHost>;
  /** The password of a user (given, or generated at start). */
  passwordOf(username: string): string;
  close(): Promise<void>;
}
