import { parseWwwAuthenticate } from '@mcp-auth-kit/protocol';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import express, { type Express, type Request } from 'express';
import request from 'supertest';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';
import { createResourceServer, type ResourceServer, type ResourceServerOptions } from '../../src/index.js';

export const RESOURCE = 'http://localhost:3000/mcp';

export interface SigningKey {
  kid: string;
  alg: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

export async function makeKey(alg = 'ES256', kid: string = randomUUID()): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' };
  return { kid, alg, privateKey, publicJwk };
}

/** A started stub issuer serving one new key of `alg`: the usual trusted authorization server of a test. */
export async function startIssuerWithKey(alg = 'ES256'): Promise<{ as: StubIssuer; key: SigningKey }> {
  const as = await new StubIssuer().start();
  const key = await makeKey(alg);
  as.keys = [key];
  return { as, key };
}

export interface TestAsOptions {
  /** Issuer path, e.g. '/tenant1' (default none). */
  path?: string;
  /** Which discovery document is served (default 'oauth'). */
  discovery?: 'oauth' | 'oidc-insert' | 'oidc-append' | 'none';
  /** Overrides the `issuer` member of the served metadata (mix-up tests). */
  advertisedIssuer?: string;
}

/** A stub issuer on loopback for the middleware's own tests (RFC 8414 metadata, JWKS, RFC 7662 introspection; counts hits); the users' one is the testing kit's TestAuthorizationServer. */
export class StubIssuer {
  server!: Server;
  issuer!: string;
  keys: SigningKey[] = [];
  hits = { metadata: 0, jwks: 0, introspection: 0 };
  jwksStatus = 200;
  metadataStatus = 200;
  introspectionResponses = new Map<string, Record<string, unknown>>();
  introspectionStatus = 200;
  lastIntrospectionAuth: string | undefined;
  lastIntrospectionBody: string | undefined;

  constructor(private readonly options: TestAsOptions = {}) {}

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.address() as AddressInfo;
    this.issuer = `http://127.0.0.1:${port}${this.options.path ?? ''}`;
    return this;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  get origin(): string {
    return new URL(this.issuer).origin;
  }

  private metadataPath(): string | undefined {
    const path = this.options.path ?? '';
    switch (this.options.discovery ?? 'oauth') {
      case 'oauth':
        return `/.well-known/oauth-authorization-server${path}`;
      case 'oidc-insert':
        return `/.well-known/openid-configuration${path}`;
      case 'oidc-append':
        return `${path}/.well-known/openid-configuration`;
      case 'none':
        return undefined;
    }
  }

  /** More RFC 8414 members for a subclass's endpoints. */
  protected extraMetadata(): Record<string, unknown> {
    return {};
  }

  /** A subclass's own endpoints: `true` when it answered the request. */
  protected async route(_req: IncomingMessage, _res: ServerResponse, _url: URL): Promise<boolean> {
    return false;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.origin);
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    if (url.pathname === this.metadataPath()) {
      this.hits.metadata++;
      if (this.metadataStatus !== 200) return json(this.metadataStatus, { error: 'unavailable' });
      return json(200, {
        issuer: this.options.advertisedIssuer ?? this.issuer,
        jwks_uri: `${this.origin}/jwks`,
        introspection_endpoint: `${this.origin}/introspect`,
        code_challenge_methods_supported: ['S256'],
        ...this.extraMetadata(),
      });
    }
    if (url.pathname === '/jwks') {
      this.hits.jwks++;
      return json(this.jwksStatus, { keys: this.keys.map((k) => k.publicJwk) });
    }
    if (url.pathname === '/introspect' && req.method === 'POST') {
      this.hits.introspection++;
      let body = '';
      for await (const chunk of req) body += chunk;
      this.lastIntrospectionAuth = req.headers.authorization;
      this.lastIntrospectionBody = body;
      const token = new URLSearchParams(body).get('token') ?? '';
      return json(this.introspectionStatus, this.introspectionResponses.get(token) ?? { active: false });
    }
    if (await this.route(req, res, url)) return;
    json(404, { error: 'not_found' });
  }
}

export interface SignOptions {
  key: SigningKey;
  issuer: string;
  /** Claims to set (undefined values remove the default claim). */
  claims?: Record<string, unknown>;
  /** Header overrides (undefined removes `typ`). */
  header?: Record<string, unknown>;
  /** Seconds since the epoch used for iat/exp defaults. */
  now?: number;
}

export async function signToken(options: SignOptions): Promise<string> {
  const now = options.now ?? Math.floor(Date.now() / 1000);
  const claims: JWTPayload = {
    iss: options.issuer,
    sub: 'user-1',
    aud: RESOURCE,
    exp: now + 300,
    iat: now,
    jti: randomUUID(),
    client_id: 'client-1',
    scope: 'notes:read',
  };
  for (const [k, v] of Object.entries(options.claims ?? {})) {
    if (v === undefined) delete claims[k];
    else claims[k] = v;
  }
  const header: Record<string, unknown> = { alg: options.key.alg, kid: options.key.kid, typ: 'at+jwt' };
  for (const [k, v] of Object.entries(options.header ?? {})) {
    if (v === undefined) delete header[k];
    else header[k] = v;
  }
  return new SignJWT(claims).setProtectedHeader(header as { alg: string }).sign(options.key.privateKey);
}

export function b64url(value: unknown): string {
  return Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');
}

export interface TestApp {
  app: Express;
  rs: ResourceServer;
  logs: Array<{ message: string; details?: Record<string, unknown> }>;
}

/** An express app: PRM router + `app.all('/mcp', rs.protect, echo)` where echo returns req.auth and req.body. */
export function makeApp(options: Partial<ResourceServerOptions> & { authorizationServers: string[] }, preParse = false): TestApp {
  const logs: TestApp['logs'] = [];
  const record = (message: string, details?: Record<string, unknown>) => {
    logs.push({ message, ...(details !== undefined ? { details } : {}) });
  };
  const rs = createResourceServer({
    resource: RESOURCE,
    scopesSupported: ['notes:read', 'notes:write'],
    scopePolicy: { default: ['notes:read'], tools: { add_note: ['notes:write'] } },
    allowedOrigins: ['http://localhost:3000'],
    logger: { info: record, warn: record, debug: record },
    ...options,
  });
  const app = express();
  app.use(rs.metadataHandler);
  if (preParse) app.use(express.json());
  app.all('/mcp', rs.protect, (req: Request & { auth?: unknown }, res) => {
    res.json({ auth: req.auth, body: req.body ?? null });
  });
  return { app, rs, logs };
}

export function rpc(method: string, params?: Record<string, unknown>, id: number | string = 1): Record<string, unknown> {
  return { jsonrpc: '2.0', id, method, ...(params !== undefined ? { params } : {}) };
}

/** Parses `Bearer a="b", c="d"` into a map (reference parser for tests; handles quoted-pairs). */
export function parseChallenge(header: string): { scheme: string; params: Record<string, string> } {
  const [challenge] = parseWwwAuthenticate(header);
  if (!challenge) throw new Error('bad challenge');
  // Tests compare the scheme as sent (`Bearer`, `DPoP`); the shared parser lower-cases it.
  return { scheme: header.slice(0, challenge.scheme.length), params: challenge.params };
}

/** Runs `test` on a {@link makeApp} app, closing its resource server after it, passed or not. */
export async function withApp(
  options: Parameters<typeof makeApp>[0],
  test: (t: TestApp) => Promise<void>,
  preParse = false,
): Promise<void> {
  const t = makeApp(options, preParse);
  try {
    await test(t);
  } finally {
    await t.rs.close();
  }
}

/** Headers of {@link postMcp}: each is sent only when given (no `Host`: supertest's own). */
export interface McpPostHeaders {
  host?: string;
  origin?: string;
  /** Sent as `Authorization: Bearer <token>`. */
  token?: string | undefined;
  /** The whole `Authorization` header, for the malformed ones. */
  authorization?: string;
}

/** POSTs a JSON-RPC `body` to `/mcp` of `app`. */
export function postMcp(app: Express, body: unknown, headers: McpPostHeaders = {}): request.Test {
  const r = request(app).post('/mcp');
  if (headers.host !== undefined) r.set('Host', headers.host);
  if (headers.origin !== undefined) r.set('Origin', headers.origin);
  const authorization = headers.authorization ?? (headers.token === undefined ? undefined : `Bearer ${headers.token}`);
  if (authorization !== undefined) r.set('Authorization', authorization);
  return r.send(body as object);
}

/** The end of a test file's resource server and its issuer (`afterAll`). */
export async function stopServers(rs: ResourceServer, as: StubIssuer): Promise<void> {
  await rs.close();
  await as.stop();
}
