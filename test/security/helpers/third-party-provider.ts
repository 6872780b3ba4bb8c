/**
 * A loopback third-party OAuth 2 provider for the token vault's tests (until the testing kit's
 * `startThirdPartyProvider` lands): RFC 8414 metadata, an authorization endpoint with a login
 * form (PKCE S256 required, RFC 9207 `iss` sent by default), a token endpoint (code with PKCE,
 * rotating refresh tokens, client_secret_basic), RFC 7009 revocation, and a tiny "drive" API.
 * Every request it receives is recorded (method, path, headers, body), so a test can prove what
 * was — and never was — sent to it (the MCP access token, above all).
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export const PROVIDER_CLIENT_ID = 'mcp-auth-kit-as';
export const PROVIDER_CLIENT_SECRET = 'provider-client-secret-0123456789';

export interface ProviderUser {
  username: string;
  password: string;
  files: string[];
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export interface FakeProvider {
  issuer: string;
  /** Every request received, in order. */
  requests: RecordedRequest[];
  /** Tokens issued (access and refresh), to look for in logs and answers. */
  issued: string[];
  /** `iss` in authorization responses: the right one (default), a wrong one, or none. */
  iss: 'right' | 'wrong' | 'none';
  /** `expires_in` of the access tokens it issues (default 3600). */
  expiresIn: number;
  /** Redirect URI registered for the AS (set by the test: `<issuer>/connect/callback`). */
  redirectUri: string;
  /** Ends every refresh token (the user revoked the app at the provider). */
  revokeAll(): void;
  /** Number of refresh grants answered 200. */
  refreshes: number;
  revocations: string[];
  close(): Promise<void>;
}

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

async function body(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString();
}

function json(res: ServerResponse, status: number, value: unknown) {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(JSON.stringify(value));
}

export async function startFakeProvider(users: ProviderUser[], options: { scopes?: string[] } = {}): Promise<FakeProvider> {
  const scopes = options.scopes ?? ['files.read'];
  const codes = new Map<string, { user: string; challenge: string; redirectUri: string; scope: string }>();
  const access = new Map<string, { user: string; exp: number }>();
  const refresh = new Map<string, { user: string; scope: string }>();
  const server: Server = createServer((req, res) => void handle(req, res).catch(() => json(res, 500, { error: 'server_error' })));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const token = () => randomBytes(24).toString('base64url');

  const provider: FakeProvider = {
    issuer,
    requests: [],
    issued: [],
    iss: 'right',
    expiresIn: 3600,
    redirectUri: '',
    refreshes: 0,
    revocations: [],
    revokeAll: () => refresh.clear(),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };

  /** RFC 6749 §2.3.1: client_secret_basic, each part form-urlencoded before the Basic encoding. */
  function clientOk(req: IncomingMessage): boolean {
    const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (!basic) return false;
    const [id, secret] = Buffer.from(basic, 'base64')
      .toString()
      .split(':')
      .map((part) => decodeURIComponent(part.replace(/\+/g, ' ')));
    return id === PROVIDER_CLIENT_ID && secret === PROVIDER_CLIENT_SECRET;
  }

  function issue(user: string, scope: string) {
    const at = token();
    const rt = token();
    access.set(at, { user, exp: Date.now() / 1000 + provider.expiresIn });
    refresh.set(rt, { user, scope });
    provider.issued.push(at, rt);
    return { access_token: at, token_type: 'Bearer', expires_in: provider.expiresIn, refresh_token: rt, scope };
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? '/', issuer);
    const text = await body(req);
    provider.requests.push({ method: req.method ?? 'GET', path: `${url.pathname}${url.search}`, headers: req.headers, body: text });
    const form = new URLSearchParams(text);

    if (url.pathname === '/.well-known/oauth-authorization-server') {
      return json(res, 200, {
        issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        revocation_endpoint: `${issuer}/revoke`,
        code_challenge_methods_supported: ['S256'],
        authorization_response_iss_parameter_supported: true,
        scopes_supported: scopes,
      });
    }
    if (url.pathname === '/authorize' && req.method === 'GET') {
      const p = url.searchParams;
      if (
        p.get('client_id') !== PROVIDER_CLIENT_ID ||
        p.get('redirect_uri') !== provider.redirectUri ||
        p.get('code_challenge_method') !== 'S256'
      )
        return json(res, 400, { error: 'invalid_request' });
      const hidden = [...p].map(([k, v]) => `<input type="hidden" name="${esc(k)}" value="${esc(v)}">`).join('');
      res.writeHead(200, { 'content-type': 'text/html' });
      return res.end(
        `<!DOCTYPE html><form method="post" action="/authorize">${hidden}<input name="username"><input name="password" type="password"><button name="decision" value="allow">Allow</button></form>`,
      );
    }
    if (url.pathname === '/authorize' && req.method === 'POST') {
      const redirect = new URL(String(form.get('redirect_uri')));
      const state = form.get('state');
      if (state) redirect.searchParams.set('state', state);
      if (provider.iss !== 'none') redirect.searchParams.set('iss', provider.iss === 'right' ? issuer : 'http://127.0.0.1:1/evil');
      const user = users.find((u) => u.username === form.get('username') && u.password === form.get('password'));
      if (!user || form.get('decision') !== 'allow') redirect.searchParams.set('error', 'access_denied');
      else {
        const code = token();
        codes.set(code, {
          user: user.username,
          challenge: String(form.get('code_challenge')),
          redirectUri: String(form.get('redirect_uri')),
          scope: form.get('scope') ?? '',
        });
        redirect.searchParams.set('code', code);
      }
      res.writeHead(303, { location: redirect.href });
      return res.end();
    }
    if (url.pathname === '/token' && req.method === 'POST') {
      if (!clientOk(req)) return json(res, 401, { error: 'invalid_client' });
      if (form.get('grant_type') === 'authorization_code') {
        const code = codes.get(String(form.get('code')));
        codes.delete(String(form.get('code')));
        const verifier = String(form.get('code_verifier'));
        if (
          !code ||
          code.redirectUri !== form.get('redirect_uri') ||
          createHash('sha256').update(verifier).digest('base64url') !== code.challenge
        )
          return json(res, 400, { error: 'invalid_grant' });
        return json(res, 200, issue(code.user, code.scope));
      }
      if (form.get('grant_type') === 'refresh_token') {
        const old = refresh.get(String(form.get('refresh_token')));
        if (!old) return json(res, 400, { error: 'invalid_grant' });
        refresh.delete(String(form.get('refresh_token')));
        provider.refreshes++;
        return json(res, 200, issue(old.user, old.scope));
      }
      return json(res, 400, { error: 'unsupported_grant_type' });
    }
    if (url.pathname === '/revoke' && req.method === 'POST') {
      if (!clientOk(req)) return json(res, 401, { error: 'invalid_client' });
      const t = String(form.get('token'));
      provider.revocations.push(t);
      refresh.delete(t);
      access.delete(t);
      res.writeHead(200);
      return res.end();
    }
    if (url.pathname === '/api/files') {
      const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      const at = bearer ? access.get(bearer) : undefined;
      if (!at || at.exp < Date.now() / 1000) return json(res, 401, { error: 'invalid_token' });
      return json(res, 200, { user: at.user, files: users.find((u) => u.username === at.user)?.files ?? [] });
    }
    json(res, 404, { error: 'not_found' });
  }

  return provider;
}
