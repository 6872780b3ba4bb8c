/** The public shapes of the loopback third-party provider: its options, users, clients and handle. */

/** A file in a provider user's drive (what `GET /api/files` lists). */
export interface ThirdPartyFile {
  /** Default: `f<n>` (its position, from 1). */
  id?: string;
  name: string;
  /** Default: empty. Its length is the listed `size`. */
  content?: string;
}

export interface ThirdPartyUser {
  username: string;
  /** Typed into the provider's sign-in page (default: a random one, see `passwordOf`). */
  password?: string;
  displayName?: string;
  /** The user's files (default: one file, `<username>-notes.txt`). */
  files?: readonly ThirdPartyFile[];
}

/** A confidential client of the provider (e.g. our authorization server's token vault). */
export interface ThirdPartyClient {
  clientId: string;
  /** Accepted as `client_secret_basic` or `client_secret_post` (RFC 6749 §2.3.1). */
  clientSecret: string;
  /** Registered redirect URIs, compared as exact strings (RFC 6749 §3.1.2.2, OAuth 2.1 §2.3.1). */
  redirectUris: readonly string[];
  /** Shown on the consent page (default: the client_id). */
  name?: string;
}

/**
 * What the authorization response says about its issuer (RFC 9207): `'send'` (default)
 * advertises `authorization_response_iss_parameter_supported: true` and sends `iss`; `'omit'`
 * advertises it but leaves `iss` out (a broken provider: clients must refuse, RFC 9207 §2.4);
 * `'unadvertised'` does neither (an older provider: clients proceed); `{ wrong }` advertises
 * support and sends that value instead of the issuer (a mix-up: clients must refuse).
 */
export type ResponseIssBehaviour = 'send' | 'omit' | 'unadvertised' | { wrong: string };

export interface StartThirdPartyProviderOptions {
  /** The provider's accounts (a username alone gets a random password and one file). */
  users: readonly (ThirdPartyUser | string)[];
  /** Registered clients (default: none; add them with `registerClient` once the redirect URI is known). */
  clients?: readonly ThirdPartyClient[];
  /** Shown on its pages (default `Drive`). */
  displayName?: string;
  /** The scopes it knows (default `['files.read']`); `GET /api/files` needs `files.read`. */
  scopes?: readonly string[];
  /** Host name in the issuer (default `127.0.0.1`); it always listens on 127.0.0.1. */
  hostname?: '127.0.0.1' | 'localhost';
  /** Port to listen on (default 0: an ephemeral port). */
  port?: number;
  /** Access token lifetime in seconds (default 3600): short ones test refreshing. */
  accessTokenLifetime?: number;
  /** Authorization code lifetime in seconds (default 60; RFC 6749 §4.1.2 says at most 10 minutes). */
  codeLifetime?: number;
  /** RFC 9207 behaviour of the authorization response (default `'send'`). */
  responseIss?: ResponseIssBehaviour;
}

/** One HTTP request the provider received, as it arrived (tokens included: test memory only). */
export interface RecordedRequest {
  method: string;
  /** Path and query. */
  url: string;
  /** Header names in lower case. */
  headers: Record<string, string>;
  /** The raw body ('' without one). */
  body: string;
}

/** A live grant: what a user allowed a client (tokens issued under it until it is revoked). */
export interface ThirdPartyGrant {
  username: string;
  clientId: string;
  scopes: string[];
}

export interface ThirdPartyProvider {
  /** `http://127.0.0.1:<port>` (or `localhost`). */
  issuer: string;
  port: number;
  /** Its RFC 8414 metadata (served at `/.well-known/oauth-authorization-server`). */
  metadata: Record<string, unknown>;
  /** `<issuer>/api`: `GET /files` and `GET /whoami` with a bearer token. */
  apiBase: string;
  /** Adds a client, or replaces the one with the same client_id (e.g. to add a redirect URI). Returns it with a generated secret when none was given. */
  registerClient(client: Omit<ThirdPartyClient, 'clientSecret'> & { clientSecret?: string }): ThirdPartyClient;
  /** The user's password (given or generated); undefined for an unknown user. */
  passwordOf(username: string): string | undefined;
  /** The live grants, of one user or all. */
  grants(username?: string): ThirdPartyGrant[];
  /** Revokes every grant of the user (its access and refresh tokens stop working); returns how many. */
  revokeGrants(username: string): number;
  /** Every request received, in order. */
  readonly requests: readonly RecordedRequest[];
  /** The requests whose URL, headers or body contain `value` (e.g. a token that must never reach it). */
  requestsContaining(value: string): RecordedRequest[];
  close(): Promise<void>;
}
