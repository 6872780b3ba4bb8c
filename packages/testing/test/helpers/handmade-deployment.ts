/**
 * A small but correct MCP deployment built by hand (PRM, AS metadata, a protected endpoint that
 * verifies JWTs), on one loopback server, with switches that break one seam each: what the
 * doctor must find. Tokens are signed here with the deployment's own key.
 */
import express, { type Request, type Response } from 'express';
import { SignJWT, exportJWK, generateKeyPair, jwtVerify, createLocalJWKSet, type JWK } from 'jose';
import { startLoopbackServer, type LoopbackServer } from '../../src/index.js';

export type Breakage =
  | 'prm-resource'
  | 'issuer-mismatch'
  | 'no-pkce'
  | 'no-resource-metadata'
  | 'audience-unchecked'
  | 'scope-missing-on-403'
  | 'origin-unchecked'
  | 'query-token-accepted'
  | 'hostile-strings';

export interface HandmadeDeployment {
  url: string;
  /** A token for this server (scope `read`). */
  token: string;
  /** A token of the same issuer for another resource. */
  otherResourceToken: string;
  close(): Promise<void>;
}

/** Text a hostile server might send to rewrite a terminal: ESC sequences, a forged line, bidi. */
export const HOSTILE = '\u001b[2J\u001b]0;owned\u0007\nPASS forged line\u202e';

export async function startHandmadeDeployment(breaks: readonly Breakage[] = []): Promise<HandmadeDeployment> {
  const broken = new Set(breaks);
  const server: LoopbackServer = await startLoopbackServer();
  const origin = server.origin;
  const resource = `${origin}/mcp`;
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const jwk: JWK = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256' };
  const jwks = createLocalJWKSet({ keys: [jwk] });
  const sign = (aud: string) =>
    new SignJWT({ scope: 'read', client_id: 'c1' })
      .setProtectedHeader({ alg: 'ES256', kid: 'k1', typ: 'at+jwt' })
      .setIssuer(origin)
      .setSubject('u1')
      .setAudience(aud)
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(privateKey);

  const app = express();
  const prmUrl = `${origin}/.well-known/oauth-protected-resource/mcp`;
  const hostile = broken.has('hostile-strings') ? HOSTILE : '';
  app.get('/.well-known/oauth-protected-resource/mcp', (_req, res) => {
    res.set('access-control-allow-origin', '*').json({
      resource: broken.has('prm-resource') ? `${origin}/other${hostile}` : resource,
      authorization_servers: [origin],
      scopes_supported: ['read', 'write'],
    });
  });
  app.get('/.well-known/oauth-authorization-server', (_req, res) => {
    res.json({
      issuer: broken.has('issuer-mismatch') ? `${origin}/${hostile}` : origin,
      authorization_endpoint: `${origin}/authorize`,
      token_endpoint: `${origin}/token`,
      registration_endpoint: `${origin}/register`,
      jwks_uri: `${origin}/jwks`,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      token_endpoint_auth_methods_supported: ['none'],
      authorization_response_iss_parameter_supported: true,
      ...(!broken.has('no-pkce') && { code_challenge_methods_supported: ['S256'] }),
    });
  });
  app.post('/mcp', express.json(), (req, res) => protectedEndpoint(req, res, { broken, resource, prmUrl, jwks, hostile }));
  server.handle(app);
  return { url: resource, token: await sign(resource), otherResourceToken: await sign(`${origin}/another`), close: () => server.close() };
}

interface EndpointSetup {
  broken: Set<Breakage>;
  resource: string;
  prmUrl: string;
  jwks: ReturnType<typeof createLocalJWKSet>;
  hostile: string;
}

async function protectedEndpoint(req: Request, res: Response, s: EndpointSetup): Promise<void> {
  const meta = s.broken.has('no-resource-metadata') ? '' : `, resource_metadata="${s.prmUrl}"`;
  if (req.headers.origin !== undefined && !s.broken.has('origin-unchecked')) {
    res.status(403).json({ jsonrpc: '2.0', error: { code: -32000, message: 'Forbidden origin' } });
    return;
  }
  const fromQuery = s.broken.has('query-token-accepted') && typeof req.query.access_token === 'string' ? req.query.access_token : undefined;
  const header = req.headers.authorization;
  const token = fromQuery ?? (header?.startsWith('Bearer ') ? header.slice(7) : undefined);
  if (!token) {
    res.status(401).set('www-authenticate', `Bearer scope="read"${meta}`).json({ error: 'unauthorized', error_description: s.hostile });
    return;
  }
  try {
    const audience = s.broken.has('audience-unchecked') ? undefined : s.resource;
    await jwtVerify(token, s.jwks, { typ: 'at+jwt', ...(audience && { audience }) });
  } catch {
    res.status(401).set('www-authenticate', `Bearer error="invalid_token"${meta}`).end();
    return;
  }
  const body = req.body as { method?: string; params?: { name?: string } };
  if (body.method === 'tools/call' && body.params?.name === 'write') {
    const scope = s.broken.has('scope-missing-on-403') ? '' : ', scope="read write"';
    res.status(403).set('www-authenticate', `Bearer error="insufficient_scope"${scope}${meta}`).end();
    return;
  }
  res.json({
    jsonrpc: '2.0',
    id: 1,
    result: { protocolVersion: '2025-11-25', capabilities: {}, serverInfo: { name: 'handmade', version: '1' } },
  });
}
