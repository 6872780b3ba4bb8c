import * as oauth from 'oauth4webapi';
import { importPKCS8, importJWK, type JWK } from 'jose';
import { oauthErrorCode, oauthErrorDescription } from '@mcp-auth-kit/protocol';
import { ERR, McpAuthError, type McpAuthErrorCode } from './errors.js';
import { policyFetch, readJsonObject, type HttpDeps } from './http.js';
import { networkFailureReason } from './unreachable.js';
import type { AuthorizationServerMetadata } from './discovery.js';
import type { ClientInformation } from './store.js';
import { DEFAULTS } from './config/defaults.js';

type CryptoKey = oauth.PrivateKey['key'];

/** A private key for `private_key_jwt` (RFC 7523): a CryptoKey, a PKCS#8 PEM or a private JWK. */
export interface PrivateKeyInput {
  key: CryptoKey | string | JWK;
  /** JWS algorithm, e.g. `ES256`, `RS256`. Required for PEM input; default `ES256`. */
  alg?: string;
  kid?: string;
}

export type TokenEndpointResponse = oauth.TokenEndpointResponse;

export function asServer(meta: AuthorizationServerMetadata): oauth.AuthorizationServer {
  return meta as unknown as oauth.AuthorizationServer;
}

export function requestOptions(deps: HttpDeps) {
  // The policy fetch applies https-or-loopback itself, so oauth4webapi's own https check is relaxed.
  return { [oauth.customFetch]: policyFetch(deps), [oauth.allowInsecureRequests]: true } as const;
}

export async function toCryptoKey(input: PrivateKeyInput): Promise<oauth.PrivateKey> {
  const alg = input.alg ?? DEFAULTS.privateKeyAlg;
  let key: CryptoKey;
  if (typeof input.key === 'string') key = (await importPKCS8(input.key, alg)) as CryptoKey;
  else if ('type' in input.key && 'algorithm' in input.key) key = input.key as CryptoKey;
  else key = (await importJWK(input.key as JWK, alg)) as CryptoKey;
  return input.kid ? { key, kid: input.kid } : { key };
}

/** Token endpoint client authentication: none, client_secret_basic, client_secret_post, private_key_jwt. */
export async function clientAuthentication(info: ClientInformation, privateKey?: PrivateKeyInput): Promise<oauth.ClientAuth> {
  const method = info.token_endpoint_auth_method ?? (info.client_secret ? 'client_secret_basic' : 'none');
  switch (method) {
    case 'none':
      return oauth.None();
    case 'client_secret_basic':
      if (!info.client_secret) break;
      return clientSecretBasic(info.client_id, info.client_secret);
    case 'client_secret_post':
      if (!info.client_secret) break;
      return oauth.ClientSecretPost(info.client_secret);
    case 'private_key_jwt':
      if (!privateKey) break;
      return oauth.PrivateKeyJwt(await toCryptoKey(privateKey));
    default:
      throw new McpAuthError(ERR.INVALID_ARGUMENT, `unsupported token_endpoint_auth_method "${method}"`);
  }
  throw new McpAuthError(ERR.INVALID_ARGUMENT, `token_endpoint_auth_method "${method}" needs a secret or key that is not configured`);
}

/**
 * RFC 6749 §2.3.1 Basic authentication. Credentials are application/x-www-form-urlencoded
 * before base64 (so `-`, `.`, `_`, `*` stay as they are; oauth4webapi also escapes those, which
 * servers that skip the decoding step then reject).
 */
function clientSecretBasic(clientId: string, secret: string): oauth.ClientAuth {
  const enc = (v: string) => new URLSearchParams({ v }).toString().slice(2);
  const value = Buffer.from(`${enc(clientId)}:${enc(secret)}`).toString('base64');
  return (_as, _client, _body, headers) => {
    headers.set('authorization', `Basic ${value}`);
  };
}

/** `endpoint`: the URL that was called, named when it did not answer at all. */
function mapError(err: unknown, code: McpAuthErrorCode, what: string, endpoint?: string): never {
  if (err instanceof McpAuthError) throw err;
  // a request bound (deadline, size) hit while oauth4webapi read the body: that refusal, as it is
  if (err instanceof Error && err.cause instanceof McpAuthError) throw err.cause;
  const unreachable = networkFailureReason(err);
  if (unreachable) {
    const where = endpoint ? ` at ${originOf(endpoint)}` : '';
    throw new McpAuthError(ERR.SERVER_UNREACHABLE, `${what} failed: the authorization server${where} did not answer (${unreachable})`, {
      cause: err,
    });
  }
  if (err instanceof oauth.ResponseBodyError) {
    // RFC 6749 §5.2: a code outside its charset (a newline, an escape) is never echoed.
    const error = oauthErrorCode(err.error);
    const description = oauthErrorDescription(err.error_description);
    throw new McpAuthError(code, `${what} failed: ${error}${description ? ` (${description})` : ''}`, {
      cause: err,
      error,
      ...(description !== undefined && { error_description: description }),
      status: err.status,
    });
  }
  if (err instanceof oauth.WWWAuthenticateChallengeError) {
    throw new McpAuthError(code, `${what} failed with HTTP ${err.status}`, { cause: err, status: err.status });
  }
  const message = err instanceof Error ? err.message : String(err);
  throw new McpAuthError(code, `${what} failed: ${message}`, { cause: err });
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}

/**
 * MCP Authorization Response Validation (RFC 9207 §2.4 table) and `state` check, done by
 * oauth4webapi's `validateAuthResponse`: `iss` is compared with the recorded issuer by exact
 * string comparison, required when the AS advertises `authorization_response_iss_parameter_supported`,
 * and checked BEFORE an `error` is looked at — so an error whose `iss` mismatches is never acted on.
 */
export function validateAuthorizationResponse(
  as: AuthorizationServerMetadata,
  clientId: string,
  callback: URL | URLSearchParams,
  expectedState: string,
): URLSearchParams {
  try {
    return oauth.validateAuthResponse(asServer(as), { client_id: clientId }, callback, expectedState);
  } catch (err) {
    if (err instanceof oauth.AuthorizationResponseError) {
      // RFC 6749 §4.1.2.1: the code is checked against its charset before it is echoed.
      const error = oauthErrorCode(err.error);
      const text = oauthErrorDescription(err.error_description);
      const description = text ? `: ${text}` : '';
      throw new McpAuthError(ERR.AUTHORIZATION_DENIED, `the authorization server refused the authorization: ${error}${description}`, {
        cause: err,
        error,
        ...(text !== undefined && { error_description: text }),
      });
    }
    const message = err instanceof Error ? err.message : String(err);
    // The parameters are deliberately not echoed: they may hold a code or an attacker's text.
    throw new McpAuthError(ERR.AUTHORIZATION_RESPONSE_INVALID, `authorization response rejected: ${message}`);
  }
}

export interface GrantContext {
  as: AuthorizationServerMetadata;
  client: ClientInformation;
  privateKey?: PrivateKeyInput | undefined;
  deps: HttpDeps;
  /** RFC 9449: sender-constrain the tokens with this DPoP key. */
  dpop?: oauth.DPoPHandle | undefined;
}

/**
 * Runs one token endpoint request/response pair. With DPoP, a `use_dpop_nonce` answer is retried
 * once with the server's nonce (RFC 9449 §8), which oauth4webapi caches on the handle.
 */
async function tokenCall(
  ctx: GrantContext,
  what: string,
  send: (
    as: oauth.AuthorizationServer,
    client: oauth.Client,
    auth: oauth.ClientAuth,
    options: oauth.TokenEndpointRequestOptions,
  ) => Promise<Response>,
  process: (as: oauth.AuthorizationServer, client: oauth.Client, res: Response) => Promise<TokenEndpointResponse>,
  additionalParameters?: Record<string, string>,
): Promise<TokenEndpointResponse> {
  const as = asServer(ctx.as);
  const client = { client_id: ctx.client.client_id };
  try {
    const auth = await clientAuthentication(ctx.client, ctx.privateKey);
    const options: oauth.TokenEndpointRequestOptions = {
      ...requestOptions(ctx.deps),
      ...(additionalParameters && { additionalParameters }),
      ...(ctx.dpop && { DPoP: ctx.dpop }),
    };
    for (let attempt = 0; ; attempt++) {
      try {
        return await process(as, client, await send(as, client, auth, options));
      } catch (err) {
        if (ctx.dpop && attempt === 0 && oauth.isDPoPNonceError(err)) continue;
        throw err;
      }
    }
  } catch (err) {
    return mapError(err, ERR.TOKEN_REQUEST_FAILED, what, ctx.as.token_endpoint);
  }
}

/** RFC 8707 §2: `resource` goes on every token request. */
export function exchangeAuthorizationCode(
  ctx: GrantContext,
  params: URLSearchParams,
  redirectUri: string,
  codeVerifier: string,
  resource: string,
): Promise<TokenEndpointResponse> {
  return tokenCall(
    ctx,
    'authorization code exchange',
    (as, client, auth, options) => oauth.authorizationCodeGrantRequest(as, client, auth, params, redirectUri, codeVerifier, options),
    (as, client, res) => oauth.processAuthorizationCodeResponse(as, client, res),
    { resource },
  );
}

/**
 * The enterprise IdP's code exchange of an SSO sign-in (OIDC Core §3.1.3): besides the checks of
 * {@link exchangeAuthorizationCode}, an ID Token is required, and its `iss`, `aud`, `exp` and
 * `nonce` are checked (§3.1.3.7; no signature check: it came over the direct token request).
 */
export async function exchangeIdpCode(
  ctx: GrantContext,
  params: URLSearchParams,
  redirectUri: string,
  codeVerifier: string,
  nonce: string,
): Promise<{ idToken: string; claims: oauth.IDToken }> {
  const res = await tokenCall(
    ctx,
    'sign-in at the enterprise IdP',
    (as, client, auth, options) => oauth.authorizationCodeGrantRequest(as, client, auth, params, redirectUri, codeVerifier, options),
    (as, client, res) => oauth.processAuthorizationCodeResponse(as, client, res, { expectedNonce: nonce, requireIdToken: true }),
  );
  return { idToken: res.id_token!, claims: oauth.getValidatedIdTokenClaims(res)! };
}

export function refreshGrant(ctx: GrantContext, refreshToken: string, resource: string): Promise<TokenEndpointResponse> {
  return tokenCall(
    ctx,
    'refresh token grant',
    (as, client, auth, options) => oauth.refreshTokenGrantRequest(as, client, auth, refreshToken, options),
    (as, client, res) => oauth.processRefreshTokenResponse(as, client, res),
    { resource },
  );
}

/** OAuth client credentials grant (MCP extension `io.modelcontextprotocol/oauth-client-credentials`). */
export function clientCredentialsGrant(ctx: GrantContext, resource: string, scope: string | undefined): Promise<TokenEndpointResponse> {
  const params: Record<string, string> = { resource };
  if (scope) params.scope = scope;
  return tokenCall(
    ctx,
    'client credentials grant',
    (as, client, auth, options) => oauth.clientCredentialsGrantRequest(as, client, auth, params, options),
    (as, client, res) => oauth.processClientCredentialsResponse(as, client, res),
  );
}

/**
 * RFC 7009 token revocation (best effort: the caller forgets the token either way). Returns
 * false when the AS has no revocation endpoint or refused.
 */
export async function revokeToken(ctx: GrantContext, token: string, hint: 'refresh_token' | 'access_token'): Promise<boolean> {
  if (typeof ctx.as.revocation_endpoint !== 'string') return false;
  try {
    const auth = await clientAuthentication(ctx.client, ctx.privateKey);
    const res = await oauth.revocationRequest(asServer(ctx.as), { client_id: ctx.client.client_id }, auth, token, {
      ...requestOptions(ctx.deps),
      additionalParameters: { token_type_hint: hint },
    });
    await oauth.processRevocationResponse(res);
    return true;
  } catch {
    return false;
  }
}

export const JWT_BEARER_GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

/**
 * RFC 7523 §2.1 JWT bearer authorization grant: exchanges an assertion (a workload identity JWT,
 * or an ID-JAG from an enterprise IdP) for an access token bound to `resource`.
 */
export function jwtBearerGrant(
  ctx: GrantContext,
  assertion: string,
  resource: string,
  scope: string | undefined,
): Promise<TokenEndpointResponse> {
  const params: Record<string, string> = { assertion, resource };
  if (scope) params.scope = scope;
  return tokenCall(
    ctx,
    'JWT bearer grant',
    (as, client, auth, options) => oauth.genericTokenEndpointRequest(as, client, auth, JWT_BEARER_GRANT, params, options),
    (as, client, res) => oauth.processGenericTokenEndpointResponse(as, client, res),
  );
}

/** Parameters of an RFC 8693 token exchange for an Identity Assertion JWT Authorization Grant. */
export interface IdJagRequest {
  /** The enterprise IdP token endpoint. */
  tokenEndpoint: string;
  /** The MCP client's client_id at the IdP. */
  clientId: string;
  clientSecret?: string | undefined;
  /** The identity assertion (OpenID ID Token) from the user's SSO login. */
  idToken: string;
  /** The MCP authorization server issuer (the ID-JAG audience). */
  audience: string;
  /** The MCP server resource identifier. */
  resource: string;
  scope?: string | undefined;
}

/**
 * Enterprise-Managed Authorization (extension `io.modelcontextprotocol/enterprise-managed-authorization`):
 * RFC 8693 token exchange of an ID Token for an ID-JAG at the enterprise IdP.
 */
export async function requestIdJag(req: IdJagRequest, deps: HttpDeps): Promise<string> {
  const body = new URLSearchParams({
    grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
    requested_token_type: 'urn:ietf:params:oauth:token-type:id-jag',
    subject_token_type: 'urn:ietf:params:oauth:token-type:id_token',
    subject_token: req.idToken,
    audience: req.audience,
    resource: req.resource,
  });
  if (req.scope) body.set('scope', req.scope);
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
  if (req.clientSecret) {
    const enc = (v: string) => new URLSearchParams({ v }).toString().slice(2);
    headers.authorization = `Basic ${Buffer.from(`${enc(req.clientId)}:${enc(req.clientSecret)}`).toString('base64')}`;
  } else {
    body.set('client_id', req.clientId);
  }
  let res: Response;
  try {
    res = await policyFetch(deps)(req.tokenEndpoint, { method: 'POST', headers, body, redirect: 'manual' });
  } catch (err) {
    return mapError(err, ERR.TOKEN_REQUEST_FAILED, 'ID-JAG token exchange', req.tokenEndpoint);
  }
  const json = await readJsonObject(res);
  if (res.status !== 200 || !json || typeof json.access_token !== 'string') {
    const error = json?.error === undefined ? undefined : oauthErrorCode(json.error);
    const description = oauthErrorDescription(json?.error_description);
    // The enterprise IdP decides (MCP enterprise-managed authorization §7.2): a refusal here,
    // e.g. of a step-up's wider scope, is the organization's policy, not a fault of the client.
    throw new McpAuthError(
      ERR.TOKEN_REQUEST_FAILED,
      `the enterprise IdP refused the ID-JAG token exchange (HTTP ${res.status}${error ? `, ${error}` : ''}${description ? `: ${description}` : ''})`,
      {
        status: res.status,
        ...(error !== undefined && { error }),
        ...(description !== undefined && { error_description: description }),
      },
    );
  }
  if (json.issued_token_type !== undefined && json.issued_token_type !== 'urn:ietf:params:oauth:token-type:id-jag') {
    throw new McpAuthError(ERR.TOKEN_REQUEST_FAILED, `ID-JAG token exchange returned ${String(json.issued_token_type)}`);
  }
  return json.access_token;
}

/**
 * RFC 7591 registration. Processed by hand rather than by oauth4webapi because deployed
 * servers often omit `client_secret_expires_at` next to a secret; only `client_id` is required here.
 */
export async function registerClient(
  as: AuthorizationServerMetadata,
  metadata: Record<string, unknown>,
  deps: HttpDeps,
): Promise<Record<string, unknown>> {
  const endpoint = as.registration_endpoint;
  if (!endpoint) throw new McpAuthError(ERR.REGISTRATION_UNAVAILABLE, `authorization server ${as.issuer} has no registration_endpoint`);
  let res: Response;
  try {
    res = await policyFetch(deps)(endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(metadata),
      redirect: 'manual',
    });
  } catch (err) {
    return mapError(err, ERR.REGISTRATION_REJECTED, 'dynamic client registration', endpoint);
  }
  const body = await readJsonObject(res);
  if (res.status !== 201 && res.status !== 200) {
    const error = body?.error === undefined ? undefined : oauthErrorCode(body.error);
    const description = oauthErrorDescription(body?.error_description);
    throw new McpAuthError(
      ERR.REGISTRATION_REJECTED,
      `dynamic client registration refused (HTTP ${res.status}${error ? `, ${error}` : ''}${description ? `: ${description}` : ''})`,
      {
        status: res.status,
        ...(error !== undefined && { error }),
        ...(description !== undefined && { error_description: description }),
      },
    );
  }
  if (!body || typeof body.client_id !== 'string' || !body.client_id) {
    throw new McpAuthError(ERR.REGISTRATION_REJECTED, 'registration response has no client_id');
  }
  return body;
}

export const generateCodeVerifier = oauth.generateRandomCodeVerifier;
export const generateState = oauth.generateRandomState;
export const generateNonce = oauth.generateRandomNonce;
