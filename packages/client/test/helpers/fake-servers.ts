// A programmable fake AS + RS pair on loopback for registration, binding and security tests.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { close, listen } from './harness.js';

export interface FakeAsOptions {
  metadata?: Record<string, unknown>;
  /** How the authorization endpoint answers. */
  respond?: (q: URLSearchParams, issuer: string) => Record<string, string>;
  registration?: (body: Record<string, unknown>) => [number, Record<string, unknown>];
}

export interface FakeAs {
  issuer: string;
  tokens: Set<string>;
  authorizations: URLSearchParams[];
  tokenRequests: { body: URLSearchParams; authorization: string | undefined }[];
  registrations: Record<string, unknown>[];
  close(): Promise<void>;
}

export async function startFakeAs(opts: FakeAsOptions = {}): Promise<FakeAs> {
  const server = createServer();
  const issuer = await listen(server);
  const tokens = new Set<string>();
  const state: FakeAs = { issuer, tokens, authorizations: [], tokenRequests: [], registrations: [], close: () => close(server) };
  let n = 0;
  server.on('request', async (req, res) => {
    const url = new URL(req.url!, issuer);
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString();
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) =>
      res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
    if (url.pathname === '/.well-known/oauth-authorization-server') {
      return send(200, {
        issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        registration_endpoint: `${issuer}/register`,
        code_challenge_methods_supported: ['S256'],
        authorization_response_iss_parameter_supported: true,
        token_endpoint_auth_methods_supported: ['none', 'client_secret_basic', 'client_secret_post', 'private_key_jwt'],
        ...opts.metadata,
      });
    }
    if (url.pathname === '/authorize') {
      state.authorizations.push(url.searchParams);
      const q = url.searchParams;
      const params = opts.respond ? opts.respond(q, issuer) : { code: `code-${++n}`, state: q.get('state')!, iss: issuer };
      const target = new URL(q.get('redirect_uri')!);
      for (const [k, v] of Object.entries(params)) target.searchParams.set(k, v);
      return res.writeHead(302, { location: target.href }).end();
    }
    if (url.pathname === '/register') {
      const body = JSON.parse(raw) as Record<string, unknown>;
      state.registrations.push(body);
      const [status, out] = opts.registration
        ? opts.registration(body)
        : [201, { client_id: `dcr-${new URL(issuer).port}-${state.registrations.length}`, ...body }];
      return send(status, out);
    }
    if (url.pathname === '/token') {
      const body = new URLSearchParams(raw);
      state.tokenRequests.push({ body, authorization: req.headers.authorization });
      const at = `at-${new URL(issuer).port}-${++n}`;
      tokens.add(at);
      return send(200, {
        access_token: at,
        token_type: 'Bearer',
        expires_in: 3600,
        refresh_token: `rt-${n}`,
        ...(body.get('scope') && { scope: body.get('scope') }),
      });
    }
    return send(404, { error: 'not_found' });
  });
  return state;
}

export interface FakeRs {
  mcpUrl: string;
  /** Switches the PRM to another AS (authorization server migration). */
  setAs(as: FakeAs): void;
  /** Makes the RS refuse every token with 401 invalid_token. */
  rejectAll: boolean;
  seenTokens: (string | undefined)[];
  /** Every request to the MCP endpoint as it arrived: method, content type and body bytes. */
  seenRequests: { method: string; contentType: string | undefined; body: Buffer }[];
  close(): Promise<void>;
}

/** RS accepting tokens of its current AS; 401 with resource_metadata + scope otherwise. */
export async function startFakeRs(
  as: FakeAs,
  opts: { scope?: string; insufficient?: (token: string) => string | undefined } = {},
): Promise<FakeRs> {
  const server = createServer();
  const base = await listen(server);
  let current = as;
  const seenTokens: (string | undefined)[] = [];
  const seenRequests: FakeRs['seenRequests'] = [];
  const prm = `${base}/.well-known/oauth-protected-resource/mcp`;
  server.on('request', async (req, res) => {
    const body = await readOrServePrm(req, res, base, current.issuer);
    if (body === undefined) return undefined;
    const auth = req.headers.authorization;
    const token = auth?.startsWith('Bearer ') ? auth.slice(7) : undefined;
    seenTokens.push(token);
    seenRequests.push({ method: req.method!, contentType: req.headers['content-type'], body });
    if (!token || !current.tokens.has(token) || state.rejectAll) {
      return res
        .writeHead(401, {
          'www-authenticate': `Bearer resource_metadata="${prm}"${opts.scope ? `, scope="${opts.scope}"` : ''}${token ? ', error="invalid_token"' : ''}`,
        })
        .end();
    }
    const need = opts.insufficient?.(token);
    if (need) {
      return res
        .writeHead(403, { 'www-authenticate': `Bearer error="insufficient_scope", scope="${need}", resource_metadata="${prm}"` })
        .end();
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    return undefined;
  });
  const state: FakeRs = {
    mcpUrl: `${base}/mcp`,
    setAs: (a) => (current = a),
    rejectAll: false,
    seenTokens,
    seenRequests,
    close: () => close(server),
  };
  return state;
}

/**
 * The front of a fake MCP server at `${base}/mcp`: reads the request's body and answers the
 * protected resource metadata (naming `issuer` as its AS) itself. Returns the body, or undefined
 * when the request was the metadata's and has been answered.
 */
export async function readOrServePrm(req: IncomingMessage, res: ServerResponse, base: string, issuer: string): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  if (new URL(req.url!, base).href === `${base}/.well-known/oauth-protected-resource/mcp`) {
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ resource: `${base}/mcp`, authorization_servers: [issuer], scopes_supported: ['basic'] }));
    return undefined;
  }
  return Buffer.concat(chunks);
}
