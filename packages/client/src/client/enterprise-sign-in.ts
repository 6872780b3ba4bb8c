import { pkceChallengeS256 } from '@mcp-auth-kit/protocol';
import { assertPkceS256, discoverAuthorizationServer, type AuthorizationServerMetadata } from '../discovery.js';
import { ERR, McpAuthError } from '../errors.js';
import type { FetchLike, HttpDeps } from '../http.js';
import { startLoopbackListener, type LoopbackListenerOptions } from '../loopback.js';
import { exchangeIdpCode, generateCodeVerifier, generateNonce, generateState, validateAuthorizationResponse } from '../oauth.js';
import { assertAllowedUrl } from '../url.js';
import { idpDeps } from './enterprise-managed.js';
import { DEFAULTS } from '../config/defaults.js';

/** Settings of {@link enterpriseSignIn}: the organization's IdP and this client's registration there. */
export interface EnterpriseSignInOptions {
  /** The enterprise IdP's issuer (OpenID Connect Discovery / RFC 8414 metadata is read from it). */
  idpIssuer: string;
  /** This client's client_id at the IdP. */
  idpClientId: string;
  /** Its secret, for a confidential client (`client_secret_basic`); without it, a public client with PKCE. */
  idpClientSecret?: string | undefined;
  /** Shows the IdP's authorization URL to the user (open a browser, print it). */
  openAuthorizationUrl: (url: URL) => Promise<void>;
  /** Scope asked of the IdP. Default `openid`. */
  scope?: string;
  loopback?: LoopbackListenerOptions;
  /** How long to wait for the user at the IdP. Default 300 000 ms. */
  authorizationTimeoutMs?: number;
  /** Deadline of each request to the IdP, whole answer (default 30 000 ms). */
  requestTimeoutMs?: number;
  maxResponseBytes?: number;
  fetch?: FetchLike;
  allowInsecureRequests?: boolean;
  /** Told the loopback redirect URI once the browser was sent to the IdP. */
  onWaiting?: (redirectUri: string) => void;
}

/** The result of an SSO sign-in at the enterprise IdP. */
export interface EnterpriseSignIn {
  /** The OpenID ID Token: the identity assertion exchanged for ID-JAGs. */
  idToken: string;
  /** The IdP's token endpoint (where the ID-JAG token exchange goes). */
  tokenEndpoint: string;
  /** `iss` and `sub` of the ID Token (for "signed in as"). */
  issuer: string;
  subject: string;
  /** `exp` of the ID Token (epoch seconds). */
  expiresAt: number;
}

/**
 * Enterprise-managed authorization, "Support SSO": signs the user in at the enterprise IdP with the
 * OpenID Connect authorization code flow, PKCE S256 and a `nonce`, through the browser and a
 * loopback redirect (RFC 8252 §7.3), as the interactive MCP login does at an MCP authorization
 * server; RFC 9207 `iss` and `state` are checked, and the ID Token's `iss`, `aud`, `exp` and
 * `nonce` (OIDC Core §3.1.3.7; its signature is not checked: it came over the direct token request).
 */
export async function enterpriseSignIn(options: EnterpriseSignInOptions): Promise<EnterpriseSignIn> {
  const deps = idpDeps(options);
  const as = await discoverAuthorizationServer(options.idpIssuer, deps);
  assertPkceS256(as);
  if (!as.authorization_endpoint || !as.token_endpoint) {
    throw new McpAuthError(ERR.AS_METADATA_INVALID, `the enterprise IdP ${as.issuer} has no authorization_endpoint or token_endpoint`);
  }
  const listener = await startLoopbackListener(options.loopback ?? {});
  try {
    const verifier = generateCodeVerifier();
    const state = generateState();
    const nonce = generateNonce();
    const url = new URL(as.authorization_endpoint);
    for (const [k, v] of Object.entries({
      response_type: 'code',
      client_id: options.idpClientId,
      redirect_uri: listener.redirectUri,
      scope: options.scope ?? DEFAULTS.enterpriseSignIn.scope,
      code_challenge: pkceChallengeS256(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    })) {
      url.searchParams.set(k, v);
    }
    assertAllowedUrl(url, 'IdP authorization URL', deps);
    const callback = listener.waitForCallback({
      state,
      issuer: as.issuer,
      timeoutMs: options.authorizationTimeoutMs ?? DEFAULTS.authorizationTimeoutMs,
    });
    callback.catch(() => undefined);
    await options.openAuthorizationUrl(url);
    options.onWaiting?.(listener.redirectUri);
    const params = validateAuthorizationResponse(as, options.idpClientId, await callback, state);
    return await redeem(as, options, deps, params, listener.redirectUri, verifier, nonce);
  } finally {
    await listener.close();
  }
}

async function redeem(
  as: AuthorizationServerMetadata,
  options: EnterpriseSignInOptions,
  deps: HttpDeps,
  params: URLSearchParams,
  redirectUri: string,
  verifier: string,
  nonce: string,
): Promise<EnterpriseSignIn> {
  const client = {
    issuer: as.issuer,
    client_id: options.idpClientId,
    ...(options.idpClientSecret !== undefined && { client_secret: options.idpClientSecret }),
    source: 'pre-registered' as const,
  };
  const { idToken, claims } = await exchangeIdpCode({ as, client, deps }, params, redirectUri, verifier, nonce);
  return { idToken, tokenEndpoint: as.token_endpoint!, issuer: claims.iss, subject: claims.sub, expiresAt: claims.exp };
}
