// Test helpers: a real authorization server (oidc-provider 9), a small MCP resource server that
// verifies JWT access tokens and challenges per RFC 6750/RFC 9728, and a headless "browser".
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider, { errors, type Configuration, type KoaContextWithOIDC } from 'oidc-provider';
import {
  createRemoteJWKSet,
  jwtVerify,
  generateKeyPair,
  exportJWK,
  EmbeddedJWK,
  calculateJwkThumbprint,
  decodeProtectedHeader,
  type JWK,
} from 'jose';
import { createHash, randomBytes } from 'node:crypto';
import { HeadlessBrowser } from '@mcp-auth-kit/test-utils';

export async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

export function close(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.closeAllConnections?.();
    server.close(() => resolve());
  });
}

export interface TestAs {
  issuer: string;
  provider: Provider;
  /** Number of requests per path seen by the AS. */
  hits: Map<string, number>;
  /** Token endpoint request bodies (parsed) in order. */
  tokenRequests: URLSearchParams[];
  authorizationRequests: URLSearchParams[];
  registrations: Record<string, unknown>[];
  /** Every HTTP request to the token endpoint, in order: its DPoP proof and the answer. */
  tokenHttp: { dpop: string | undefined; status: number; dpopNonce: string | undefined; error: string | undefined }[];
  close(): Promise<void>;
}

/** oidc-provider with DCR, PKCE, resource indicators (JWT access tokens) and rotating refresh tokens. */
export async function startOidcProvider(
  resources: Record<string, string[]>,
  opts: {
    refresh?: boolean;
    /** RFC 9449 §8: the token endpoint requires a server-provided nonce in DPoP proofs. */
    dpopNonce?: boolean;
  } = {},
): Promise<TestAs> {
  const server = createServer();
  const issuer = await listen(server);
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
  const configuration: Configuration = {
    clients: [],
    jwks: { keys: [jwk as never] },
    scopes: ['openid', 'offline_access'],
    pkce: { required: () => true },
    clientDefaults: {
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      id_token_signed_response_alg: 'ES256',
    } as never,
    interactions: { url: (_ctx: KoaContextWithOIDC, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    findAccount: async (_ctx: KoaContextWithOIDC, sub: string) => ({ accountId: sub, claims: async () => ({ sub }) }),
    issueRefreshToken: async (_ctx: KoaContextWithOIDC, client: { grantTypeAllowed(t: string): boolean }) =>
      opts.refresh !== false && client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: () => true,
    expiresWithSession: async () => false,
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true, initialAccessToken: false },
      clientCredentials: { enabled: true },
      revocation: { enabled: true },
      ...(opts.dpopNonce && { dPoP: { enabled: true, nonceSecret: randomBytes(32), requireNonce: () => true } }),
      resourceIndicators: {
        enabled: true,
        useGrantedResource: async () => true,
        defaultResource: async () => Object.keys(resources)[0]!,
        getResourceServerInfo: async (_ctx: KoaContextWithOIDC, indicator: string) => {
          const scopes = resources[indicator];
          if (!scopes) throw new errors.InvalidTarget();
          return {
            scope: scopes.join(' '),
            audience: indicator,
            accessTokenTTL: 3600,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: 'ES256' } },
          };
        },
      },
    } as never,
  } as Configuration;
  const provider = new Provider(issuer, configuration);
  // Advertise the resource scopes too (and offline_access), as an MCP AS would.
  provider.use(async (ctx, next) => {
    await next();
    if (ctx.oidc?.route === 'discovery' && ctx.status === 200 && ctx.body && typeof ctx.body === 'object') {
      (ctx.body as Record<string, unknown>).scopes_supported = ['openid', 'offline_access', ...new Set(Object.values(resources).flat())];
    }
  });
  const hits = new Map<string, number>();
  const tokenRequests: URLSearchParams[] = [];
  const authorizationRequests: URLSearchParams[] = [];
  const registrations: Record<string, unknown>[] = [];
  const tokenHttp: TestAs['tokenHttp'] = [];
  const callback = provider.callback();
  provider.on('registration_create.success', (ctx: KoaContextWithOIDC) => {
    registrations.push({ ...(ctx.oidc as unknown as { body: Record<string, unknown> }).body });
  });
  const onToken = (ctx: KoaContextWithOIDC) => {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries((ctx.oidc.params ?? {}) as Record<string, unknown>)) if (typeof v === 'string') params.set(k, v);
    tokenRequests.push(params);
  };
  provider.on('grant.success', onToken);
  provider.on('grant.error', onToken);
  server.on('request', async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', issuer);
    hits.set(url.pathname, (hits.get(url.pathname) ?? 0) + 1);
    if (url.pathname === '/auth') authorizationRequests.push(url.searchParams);
    if (url.pathname === '/token') {
      const entry: TestAs['tokenHttp'][number] = {
        dpop: req.headers.dpop as string | undefined,
        status: 0,
        dpopNonce: undefined,
        error: undefined,
      };
      tokenHttp.push(entry);
      const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
      res.end = ((...args: unknown[]) => {
        entry.status = res.statusCode;
        entry.dpopNonce = res.getHeader('dpop-nonce') as string | undefined;
        if (res.statusCode >= 400 && (typeof args[0] === 'string' || Buffer.isBuffer(args[0]))) {
          try {
            entry.error = (JSON.parse(String(args[0])) as { error?: string }).error;
          } catch {
            // not JSON
          }
        }
        return end(...args);
      }) as ServerResponse['end'];
    }
    if (url.pathname.startsWith('/interaction/')) {
      // Headless login + consent: user "alice" grants every requested scope for the resource.
      try {
        const details = await provider.interactionDetails(req, res);
        const params = details.params as Record<string, string>;
        const grant = new provider.Grant({ accountId: 'alice', clientId: params.client_id! });
        const requested = (params.scope ?? '').split(' ').filter(Boolean);
        const oidcScopes = requested.filter((s) => s === 'openid' || s === 'offline_access');
        if (oidcScopes.length) grant.addOIDCScope(oidcScopes.join(' '));
        const resourceScopes = requested.filter((s) => s !== 'openid' && s !== 'offline_access');
        const resource = params.resource ?? Object.keys(resources)[0]!;
        grant.addResourceScope(resource, resourceScopes.join(' ') || (resources[resource] ?? []).join(' '));
        const grantId = await grant.save();
        await provider.interactionFinished(
          req,
          res,
          { login: { accountId: 'alice' }, consent: { grantId } },
          { mergeWithLastSubmission: false },
        );
      } catch (err) {
        res.statusCode = 500;
        res.end(String(err));
      }
      return;
    }
    return callback(req, res);
  });
  return { issuer, provider, hits, tokenRequests, authorizationRequests, registrations, tokenHttp, close: () => close(server) };
}

/**
 * Follows the authorization URL like a browser with no user (the AS logs in and consents by
 * itself), until the redirect reaches the loopback callback, which it then requests.
 */
/**
 * oidc-provider granting notes:read and notes:write to the resource server `startRs` makes (told
 * the AS's issuer once it is known): by default the fixed-answer one of `startResourceServer`. The
 * resource server is closed again when the AS fails to start.
 */
export async function startNotesPair(
  startRs: (issuerOf: () => string) => Promise<TestRs> = (issuerOf) =>
    startResourceServer(issuerOf, { basicScope: 'notes:read', writeScope: 'notes:write' }),
  asOpts: Parameters<typeof startOidcProvider>[1] = {},
): Promise<[TestAs, TestRs]> {
  let as: TestAs | undefined;
  const rs = await startRs(() => as!.issuer);
  try {
    as = await startOidcProvider({ [rs.mcpUrl]: ['notes:read', 'notes:write'] }, asOpts);
  } catch (err) {
    await rs.close();
    throw err;
  }
  return [as, rs];
}

export async function headlessBrowser(url: URL): Promise<void> {
  await new HeadlessBrowser().followToCallback(url, (target) => target.pathname === '/callback', { deliver: true });
}

export interface TestRs {
  url: string;
  /** MCP endpoint = canonical resource URI. */
  mcpUrl: string;
  requests: { authorization: string | undefined; body: string; dpop?: string | undefined }[];
  /** Access tokens to reject with 401 invalid_token even if valid (simulates revocation). */
  revoked: Set<string>;
  close(): Promise<void>;
}

/**
 * A resource server at /mcp: 401 with `resource_metadata` + `scope` without a token, 401
 * `invalid_token` for bad tokens, 403 `insufficient_scope` when the JSON-RPC body names the tool
 * "write" and the token lacks `writeScope`. Answers JSON-RPC with a fixed result otherwise.
 */
export async function startResourceServer(
  issuerOf: () => string,
  opts: {
    basicScope: string;
    writeScope: string;
    prmPath?: 'path' | 'root';
    /** Accept DPoP-bound tokens (RFC 9449) and announce DPoP in the PRM; `nonce` makes proofs carry it. */
    dpop?: { nonce?: string };
    /** Serves authorized requests (e.g. an MCP server); default answers fixed JSON. */
    handler?: (req: IncomingMessage, res: ServerResponse, body: string) => void | Promise<void>;
  },
): Promise<TestRs> {
  const server = createServer();
  const url = await listen(server);
  const mcpUrl = `${url}/mcp`;
  const prmUrl =
    opts.prmPath === 'root' ? `${url}/.well-known/oauth-protected-resource` : `${url}/.well-known/oauth-protected-resource/mcp`;
  const requests: TestRs['requests'] = [];
  const revoked = new Set<string>();
  server.on('request', async (req, res) => {
    const u = new URL(req.url ?? '/', url);
    if (req.method === 'GET' && u.href === prmUrl) {
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          resource: mcpUrl,
          authorization_servers: [issuerOf()],
          scopes_supported: [opts.basicScope],
          ...(opts.dpop && { dpop_signing_alg_values_supported: ['ES256'] }),
        }),
      );
      return;
    }
    if (u.pathname !== '/mcp') {
      res.statusCode = 404;
      res.end();
      return;
    }
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString();
    const authorization = req.headers.authorization;
    const proof = req.headers.dpop as string | undefined;
    requests.push({ authorization, body, dpop: proof });
    const challenge = (extra: string) => `Bearer resource_metadata="${prmUrl}", scope="${opts.basicScope}"${extra}`;
    const scheme = authorization?.split(' ')[0]?.toLowerCase();
    if (scheme !== 'bearer' && !(opts.dpop && scheme === 'dpop')) {
      res.writeHead(401, { 'www-authenticate': challenge('') }).end();
      return;
    }
    const token = authorization!.slice(authorization!.indexOf(' ') + 1);
    let scope: string[];
    try {
      if (revoked.has(token)) throw new Error('revoked');
      const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { cnf?: { jkt?: string } };
      if (claims.cnf?.jkt) {
        // RFC 9449 §7.1/§4.3: DPoP scheme, proof over this request, key matching cnf.jkt, ath.
        if (scheme !== 'dpop' || !proof) throw new Error('DPoP-bound token without DPoP');
        const { payload } = await jwtVerify(proof, EmbeddedJWK, { typ: 'dpop+jwt', maxTokenAge: '60s' });
        const jwk = decodeProtectedHeader(proof).jwk as JWK;
        if ((await calculateJwkThumbprint(jwk)) !== claims.cnf.jkt) throw new Error('wrong key');
        if (payload.htm !== req.method || payload.htu !== mcpUrl) throw new Error('htm/htu');
        if (payload.ath !== createHash('sha256').update(token).digest('base64url')) throw new Error('ath');
        if (opts.dpop?.nonce && payload.nonce !== opts.dpop.nonce) {
          res.writeHead(401, { 'www-authenticate': 'DPoP error="use_dpop_nonce", algs="ES256"', 'dpop-nonce': opts.dpop.nonce }).end();
          return;
        }
      } else if (scheme !== 'bearer') throw new Error('DPoP scheme for a bearer token');
      const { payload } = await jwtVerify(token, createRemoteJWKSet(new URL(`${issuerOf()}/jwks`)), {
        issuer: issuerOf(),
        audience: mcpUrl,
        typ: 'at+jwt',
      });
      scope = String(payload.scope ?? '').split(' ');
    } catch {
      res.writeHead(401, { 'www-authenticate': challenge(', error="invalid_token"') }).end();
      return;
    }
    const needsWrite = body.includes('"name":"write"');
    const needed = needsWrite ? [opts.basicScope, opts.writeScope] : [opts.basicScope];
    if (!needed.every((s) => scope.includes(s))) {
      res
        .writeHead(403, {
          'www-authenticate': `Bearer error="insufficient_scope", scope="${needsWrite ? opts.writeScope : opts.basicScope}", resource_metadata="${prmUrl}"`,
        })
        .end();
      return;
    }
    if (opts.handler) return opts.handler(req, res, body);
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ ok: true, scope }));
  });
  return { url, mcpUrl, requests, revoked, close: () => close(server) };
}
