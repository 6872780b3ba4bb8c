/**
 * A test enterprise identity provider for MCP enterprise-managed authorization: it signs ID
 * Tokens and Identity Assertion JWT Authorization Grants (ID-JAGs, `typ: oauth-id-jag+jwt`) with
 * a key it publishes at a loopback JWKS URL, and answers the RFC 8693 token exchange of an ID
 * Token for an ID-JAG (draft-ietf-oauth-identity-assertion-authz-grant §4.3) under a policy the
 * test sets: which user may get which scopes at which resource.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SignJWT, exportJWK, generateKeyPair, jwtVerify, createLocalJWKSet, type CryptoKey, type JWK, type JWTPayload } from 'jose';
import { readClientCredentials, sameSecret } from './client-secret.js';
import { startLoopbackServer, type LoopbackServer } from './loopback-server.js';

export const ID_JAG_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:id-jag';

export interface TestIdpClient {
  /** The client's secret at the IdP (client_secret_basic or client_secret_post). */
  secret: string;
  /**
   * The client's `client_id` at each MCP authorization server, by AS issuer (draft §5: the IdP
   * names the client as the resource AS knows it). Default: the same id as at the IdP.
   */
  clientIdAt?: Record<string, string>;
}

/** What the IdP's policy lets a user's client obtain: scopes per (AS issuer, resource). */
export interface TestIdpGrant {
  sub: string;
  /** The MCP authorization server's issuer (the ID-JAG `aud`). */
  audience: string;
  /** The MCP server (the ID-JAG `resource`). */
  resource: string;
  scopes: string[];
}

export interface StartTestIdpOptions {
  /** Clients of the IdP, by client_id. Default: `{ 'mcp-host': { secret: <random> } }`. */
  clients?: Record<string, TestIdpClient>;
  /** Signing algorithm (default ES256). */
  alg?: 'ES256' | 'RS256' | 'PS256' | 'EdDSA';
  /** ID-JAG lifetime in seconds (default 300). */
  idJagLifetime?: number;
  /** Issuer host: `127.0.0.1` (default) or `localhost`. */
  hostname?: '127.0.0.1' | 'localhost';
}

export interface TestIdp {
  /** `http://127.0.0.1:<port>` */
  issuer: string;
  /** Where the public keys are published (`<issuer>/jwks`). */
  jwksUri: string;
  /** RFC 8693 token exchange endpoint (`<issuer>/token`). */
  tokenEndpoint: string;
  /** The IdP's clients with their secrets. */
  clients: Record<string, TestIdpClient>;
  /** The published JWKS. */
  jwks(): { keys: JWK[] };
  /** Signs an ID Token for `clientId` (its `aud`). */
  idToken(
    claims: { sub: string; clientId?: string; email?: string; email_verified?: boolean; name?: string } & JWTPayload,
  ): Promise<string>;
  /**
   * Signs an ID-JAG directly. `claims` override the defaults (`iss`, `iat`, `exp`, `jti`); set a
   * claim to `undefined` to leave it out. `header` overrides the protected header (e.g. `typ`).
   */
  idJag(
    claims: { sub: string; aud: string; client_id: string; resource?: string | string[]; scope?: string } & JWTPayload,
    header?: Record<string, unknown>,
  ): Promise<string>;
  /** Lets the policy issue ID-JAGs for this user, AS and resource with these scopes (replaces an earlier grant of the same triple). */
  allow(grant: TestIdpGrant): void;
  /** Replaces the signing key; the old one is no longer published. */
  rotateKey(): Promise<void>;
  /** Token exchange requests received (for assertions on what the client sent). */
  readonly requests: URLSearchParams[];
  close(): Promise<void>;
}

/** What {@link startTestIdp} assumes for an option not given. */
const DEFAULTS = {
  alg: 'ES256',
  idJagLifetime: 300,
  hostname: '127.0.0.1',
  /** The one client when none are given (with a random secret). */
  clientId: 'mcp-host',
  /** Lifetime of an ID Token from `idToken()`, in seconds. */
  idTokenLifetime: 3600,
} as const;

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify(body));
}

async function readBody(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

type Alg = NonNullable<StartTestIdpOptions['alg']>;
type SigningKey = { key: CryptoKey; jwk: JWK };

/** The running IdP: its settings, current key, policy and what it received. */
interface Idp {
  issuer: string;
  alg: Alg;
  lifetime: number;
  clients: Record<string, TestIdpClient>;
  signing: SigningKey;
  grants: TestIdpGrant[];
  requests: URLSearchParams[];
}

async function newSigningKey(alg: Alg): Promise<SigningKey> {
  const pair = await generateKeyPair(alg, { extractable: true });
  const jwk = { ...(await exportJWK(pair.publicKey)), kid: randomUUID(), alg, use: 'sig' };
  return { key: pair.privateKey as CryptoKey, jwk };
}

/** Starts the IdP on 127.0.0.1:0. */
export async function startTestIdp(options: StartTestIdpOptions = {}): Promise<TestIdp> {
  const alg = options.alg ?? DEFAULTS.alg;
  const server: LoopbackServer = await startLoopbackServer();
  const idp: Idp = {
    issuer: `http://${options.hostname ?? DEFAULTS.hostname}:${server.port}`,
    alg,
    lifetime: options.idJagLifetime ?? DEFAULTS.idJagLifetime,
    clients: options.clients ?? { [DEFAULTS.clientId]: { secret: randomBytes(18).toString('base64url') } },
    signing: await newSigningKey(alg),
    grants: [],
    requests: [],
  };
  const { issuer, clients, grants } = idp;
  server.handle((req, res) => route(idp, req, res));
  return {
    issuer,
    jwksUri: `${issuer}/jwks`,
    tokenEndpoint: `${issuer}/token`,
    clients,
    jwks: () => ({ keys: [idp.signing.jwk] }),
    idToken: ({ clientId, ...claims }) =>
      sign(
        idp,
        { aud: clientId ?? Object.keys(clients)[0], exp: Math.floor(Date.now() / 1000) + DEFAULTS.idTokenLifetime, ...claims },
        { typ: 'JWT' },
      ),
    idJag: (claims, header = {}) => signIdJag(idp, claims, header),
    allow(grant) {
      const i = grants.findIndex((g) => g.sub === grant.sub && g.audience === grant.audience && g.resource === grant.resource);
      if (i >= 0) grants.splice(i, 1);
      grants.push({ ...grant, scopes: [...grant.scopes] });
    },
    rotateKey: async () => {
      idp.signing = await newSigningKey(alg);
    },
    requests: idp.requests,
    close: () => server.close(),
  };
}

function route(idp: Idp, req: IncomingMessage, res: ServerResponse) {
  const { issuer } = idp;
  const path = new URL(req.url ?? '/', issuer).pathname;
  if (req.method === 'GET' && path === '/jwks') return json(res, 200, { keys: [idp.signing.jwk] });
  if (req.method === 'GET' && path === '/.well-known/oauth-authorization-server') {
    return json(res, 200, {
      issuer,
      token_endpoint: `${issuer}/token`,
      jwks_uri: `${issuer}/jwks`,
      grant_types_supported: ['urn:ietf:params:oauth:grant-type:token-exchange'],
      identity_chaining_requested_token_types_supported: [ID_JAG_TOKEN_TYPE],
    });
  }
  if (req.method === 'POST' && path === '/token') {
    exchange(idp, req, res).catch(() => json(res, 500, { error: 'server_error' }));
    return;
  }
  json(res, 404, { error: 'not_found' });
}

async function sign(idp: Idp, payload: JWTPayload, header: Record<string, unknown>): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const body: JWTPayload = { iss: idp.issuer, iat: now, ...payload };
  for (const [k, v] of Object.entries(body)) if (v === undefined) delete body[k];
  return new SignJWT(body).setProtectedHeader({ alg: idp.alg, kid: idp.signing.jwk.kid, ...header } as never).sign(idp.signing.key);
}

function signIdJag(idp: Idp, claims: Parameters<TestIdp['idJag']>[0], header: Record<string, unknown>): Promise<string> {
  return sign(
    idp,
    { jti: randomUUID(), exp: Math.floor(Date.now() / 1000) + idp.lifetime, ...claims },
    { typ: 'oauth-id-jag+jwt', ...header },
  );
}

/** Authenticates the client (Basic or post body); undefined when it fails. */
function authenticate(idp: Idp, req: IncomingMessage, body: URLSearchParams): string | undefined {
  const presented = readClientCredentials(req.headers.authorization, body);
  if (presented.kind !== 'secret') return undefined;
  const client = Object.hasOwn(idp.clients, presented.clientId) ? idp.clients[presented.clientId] : undefined;
  return client && sameSecret(presented.secret, client.secret) ? presented.clientId : undefined;
}

/** An OAuth error answer: status and body. */
type Refusal = [status: number, body: Record<string, string>];

/** What is wrong with the form of a token exchange request, if anything. */
function exchangeRequestProblem(body: URLSearchParams): Refusal | undefined {
  if (body.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:token-exchange') return [400, { error: 'unsupported_grant_type' }];
  if (
    body.get('requested_token_type') !== ID_JAG_TOKEN_TYPE ||
    body.get('subject_token_type') !== 'urn:ietf:params:oauth:token-type:id_token'
  )
    return [400, { error: 'invalid_request', error_description: 'only ID Token → ID-JAG exchanges' }];
  if (!body.get('audience') || !body.get('resource'))
    return [400, { error: 'invalid_request', error_description: 'audience and resource are required' }];
  return undefined;
}

/** draft §4.3: token exchange of an ID Token for an ID-JAG. */
async function exchange(idp: Idp, req: IncomingMessage, res: ServerResponse) {
  const body = await readBody(req);
  idp.requests.push(body);
  const clientId = authenticate(idp, req, body);
  if (!clientId) return json(res, 401, { error: 'invalid_client' });
  const problem = exchangeRequestProblem(body);
  if (problem) return json(res, ...problem);
  const audience = body.get('audience')!;
  const resource = body.get('resource')!;
  let idClaims: JWTPayload;
  try {
    // §4.3.3: the subject token is the IdP's own ID Token, issued to this client.
    const verified = await jwtVerify(body.get('subject_token') ?? '', createLocalJWKSet({ keys: [idp.signing.jwk] }), {
      issuer: idp.issuer,
      audience: clientId,
    });
    idClaims = verified.payload;
  } catch {
    return json(res, 400, { error: 'invalid_grant', error_description: 'the subject token is not a valid ID Token for this client' });
  }
  const sub = String(idClaims.sub);
  const scope = grantedScope(idp, sub, audience, resource, body.get('scope'));
  if (Array.isArray(scope)) return json(res, ...scope);
  const token = await signIdJag(
    idp,
    {
      sub,
      aud: audience,
      client_id: idp.clients[clientId]?.clientIdAt?.[audience] ?? clientId,
      resource,
      ...(scope && { scope }),
      ...(typeof idClaims.email === 'string' && { email: idClaims.email, email_verified: idClaims.email_verified }),
    },
    {},
  );
  json(res, 200, { issued_token_type: ID_JAG_TOKEN_TYPE, access_token: token, token_type: 'N_A', scope, expires_in: idp.lifetime });
}

/** The scope the policy grants `sub` for (`audience`, `resource`): the requested one if all of it is allowed, else the grant's. */
function grantedScope(idp: Idp, sub: string, audience: string, resource: string, requestedScope: string | null): string | Refusal {
  const grant = idp.grants.find((g) => g.sub === sub && g.audience === audience && g.resource === resource);
  if (!grant)
    return [400, { error: 'access_denied', error_description: 'the organization does not allow this client to reach this MCP server' }];
  const requested = (requestedScope ?? '').split(' ').filter(Boolean);
  const beyond = requested.filter((s) => !grant.scopes.includes(s));
  if (beyond.length) {
    return [400, { error: 'invalid_scope', error_description: `the organization does not grant ${beyond.join(' ')} for this MCP server` }];
  }
  return (requested.length ? requested : grant.scopes).join(' ');
}
