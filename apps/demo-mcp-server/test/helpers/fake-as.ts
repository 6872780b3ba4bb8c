import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { SignJWT, exportJWK, generateKeyPair, type JWK } from 'jose';
import { afterAll, beforeAll } from 'vitest';

/**
 * A stand-in for the authorization server (outside this app): RFC 8414 metadata and a JWKS on
 * loopback, plus a signer for RFC 9068 access tokens.
 */
export interface FakeAuthorizationServer {
  issuer: string;
  /** Requests served, by path (lets tests see what the middleware fetched). */
  hits: Map<string, number>;
  sign(claims: TokenClaims): Promise<string>;
  close(): Promise<void>;
}

export interface TokenClaims {
  sub?: string;
  client_id?: string;
  scope?: string;
  aud?: string | string[];
  iss?: string;
  /** Seconds from now; negative for an expired token. */
  expiresIn?: number;
  typ?: string;
}

export async function startFakeAuthorizationServer(options: { audience?: string } = {}): Promise<FakeAuthorizationServer> {
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  const kid = randomUUID();
  const jwk: JWK = { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' };
  const hits = new Map<string, number>();
  let issuer = '';

  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const json = (body: unknown) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    if (path === '/.well-known/oauth-authorization-server' || path === '/.well-known/openid-configuration') {
      return json({
        issuer,
        jwks_uri: `${issuer}/jwks`,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        response_types_supported: ['code'],
        code_challenge_methods_supported: ['S256'],
      });
    }
    if (path === '/jwks') return json({ keys: [jwk] });
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    issuer,
    hits,
    async sign(claims: TokenClaims) {
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({
        client_id: claims.client_id ?? 'test-client',
        scope: claims.scope ?? 'notes:read',
        jti: randomUUID(),
      })
        .setProtectedHeader({ alg: 'RS256', kid, typ: claims.typ ?? 'at+jwt' })
        .setIssuer(claims.iss ?? issuer)
        .setSubject(claims.sub ?? 'alice')
        .setAudience(claims.aud ?? options.audience ?? 'http://localhost:3000/mcp')
        .setIssuedAt(now)
        .setExpirationTime(now + (claims.expiresIn ?? 300))
        .sign(privateKey);
    },
    close() {
      return new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

/** A fake AS for the enclosing suite: started before its tests, closed after them. */
export function useFakeAuthorizationServer(): () => FakeAuthorizationServer {
  let as: FakeAuthorizationServer | undefined;
  beforeAll(async () => {
    as = await startFakeAuthorizationServer();
  });
  afterAll(async () => as?.close());
  return () => {
    if (!as) throw new Error('the fake authorization server is not started yet');
    return as;
  };
}
