import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { createResourceServer, type ResourceServer, type ResourceServerOptions } from '../../src/index.js';
import { makeKey, RESOURCE, StubIssuer } from './harness.js';

/**
 * Stand-ins for what is outside this package in issue 41's third-party flow, built to the
 * contract (briefs/third-party-contract.md) so the real pieces replace them later:
 * - {@link FakeExchangeIssuer}: our authorization server's side, i.e. RFC 8414 metadata with a
 *   `token_endpoint`, the RFC 8693 token exchange at `/token`, and connect URLs
 *   `<issuer>/connect/<ticket>` (here a visit completes the connection at once: the login,
 *   confirmation and provider consent of the real AS are the AS's own tests);
 * - {@link FakeDrive}: a third-party API with per-user files that records every credential it
 *   receives (so tests can show the MCP access token never reaches it).
 */

export const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
/** The MCP server's confidential client at the fake AS (its `resource` is {@link RESOURCE}). */
export const MCP_CLIENT = { id: 'files-mcp-server', secret: 'files-mcp-server-secret' } as const;
export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';

/**
 * A resource server for {@link RESOURCE} that trusts `as` and exchanges tokens there as
 * {@link MCP_CLIENT}; `record` receives every log line. `extra` overrides any option.
 */
export function thirdPartyServer(
  as: FakeExchangeIssuer,
  record: (message: string, details?: Record<string, unknown>) => void,
  extra: Partial<ResourceServerOptions> = {},
): ResourceServer {
  return createResourceServer({
    resource: RESOURCE,
    authorizationServers: [as.issuer],
    thirdParty: { clientId: MCP_CLIENT.id, clientSecret: MCP_CLIENT.secret },
    logger: { debug: record, info: record, warn: record },
    ...extra,
  });
}

export interface FakeProvider {
  displayName?: string;
  /** MCP resource URIs allowed to use the provider. */
  resources: string[];
}

export interface FakeClient {
  secret: string;
  /** The client's configured `resource` (none: not allowed to exchange). */
  resource?: string;
}

/** One request the token endpoint received, as parsed. */
export interface ExchangeRecord {
  authorization: string | undefined;
  form: Record<string, string>;
  status: number;
  error?: string;
}

async function readBody(req: IncomingMessage): Promise<string> {
  let body = '';
  for await (const chunk of req) body += chunk;
  return body;
}

/** The users' files at the fake provider, by `sub`. */
export class FakeDrive {
  server!: Server;
  url!: string;
  /** Every `Authorization` header value the API received. */
  readonly credentials: string[] = [];
  /** Provider token → the user it was issued for. */
  readonly tokens = new Map<string, string>();
  readonly files = new Map<string, string[]>();

  async start(): Promise<this> {
    this.server = createServer((req, res) => this.handle(req, res));
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const authorization = req.headers.authorization ?? '';
    this.credentials.push(authorization);
    const sub = authorization.startsWith('Bearer ') ? this.tokens.get(authorization.slice(7)) : undefined;
    if (sub === undefined || req.url !== '/files') {
      res.writeHead(401, { 'www-authenticate': 'Bearer error="invalid_token"' }).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ files: this.files.get(sub) ?? [] }));
  }

  /** What a tool does with the provider token: list the user's files. */
  async list(token: string): Promise<string[]> {
    const res = await fetch(`${this.url}/files`, { headers: { authorization: `Bearer ${token}` } });
    if (res.status !== 200) throw new Error(`drive answered ${res.status}`);
    return ((await res.json()) as { files: string[] }).files;
  }
}

/** The authorization server side of the contract (see the module comment). */
export class FakeExchangeIssuer extends StubIssuer {
  readonly providers = new Map<string, FakeProvider>();
  readonly clients = new Map<string, FakeClient>();
  /** sub → provider → provider token */
  readonly connections = new Map<string, Map<string, string>>();
  /** Open connect tickets. */
  readonly tickets = new Map<string, { sub: string; provider: string; resource: string }>();
  readonly exchanges: ExchangeRecord[] = [];
  /** Revoked MCP token ids (`jti`): exchanging them is `invalid_grant`. */
  readonly revoked = new Set<string>();
  /** `expires_in` of issued provider tokens. */
  expiresIn: number | undefined = 3600;
  /** Replaces the token endpoint's answer (status, JSON body) for failure tests. */
  answer?: (form: Record<string, string>) => { status: number; body: unknown; contentType?: string } | undefined;
  /** Delay before the token endpoint answers (timeouts). */
  delayMs = 0;
  /** Whether the metadata names the token endpoint. */
  advertiseTokenEndpoint = true;

  constructor(readonly drive?: FakeDrive) {
    super();
  }

  /** Started, with a signing key, the {@link MCP_CLIENT} for {@link RESOURCE}, and the `drive` provider ("Drive") it may use. */
  static async create(drive?: FakeDrive): Promise<FakeExchangeIssuer> {
    const as = await new FakeExchangeIssuer(drive).start();
    as.keys = [await makeKey()];
    as.clients.set(MCP_CLIENT.id, { secret: MCP_CLIENT.secret, resource: RESOURCE });
    as.providers.set('drive', { displayName: 'Drive', resources: [RESOURCE] });
    return as;
  }

  get tokenEndpoint(): string {
    return `${this.origin}/token`;
  }

  protected override extraMetadata(): Record<string, unknown> {
    return this.advertiseTokenEndpoint ? { token_endpoint: this.tokenEndpoint, grant_types_supported: [TOKEN_EXCHANGE] } : {};
  }

  /** The user completes the third-party flow: a new provider token for (sub, provider). */
  connect(sub: string, provider: string): string {
    const token = `${provider}-at-${randomBytes(12).toString('base64url')}`;
    const byProvider = this.connections.get(sub) ?? new Map<string, string>();
    this.connections.set(sub, byProvider);
    byProvider.set(provider, token);
    this.drive?.tokens.set(token, sub);
    return token;
  }

  disconnect(sub: string, provider: string): void {
    const token = this.connections.get(sub)?.get(provider);
    if (token !== undefined) this.drive?.tokens.delete(token);
    this.connections.get(sub)?.delete(provider);
  }

  readonly #pending = new Set<Promise<void>>();

  /** Resolves once every token request received so far is answered (one a client gave up on still records itself). */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.#pending]);
  }

  /** Exchanges that reached the grant (client authenticated). */
  get granted(): ExchangeRecord[] {
    return this.exchanges.filter((e) => e.status === 200);
  }

  protected override async route(req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> {
    if (url.pathname === '/token' && req.method === 'POST') {
      const answered = this.token(req, res);
      this.#pending.add(answered);
      try {
        await answered;
      } finally {
        this.#pending.delete(answered);
      }
      return true;
    }
    const ticket = /^\/connect\/([A-Za-z0-9_-]+)$/.exec(url.pathname)?.[1];
    if (ticket !== undefined && req.method === 'GET') {
      const entry = this.tickets.get(ticket);
      // single use
      this.tickets.delete(ticket);
      if (entry === undefined) {
        res.writeHead(400, { 'content-type': 'text/plain' }).end('This link is no longer valid');
        return true;
      }
      this.connect(entry.sub, entry.provider);
      res.writeHead(200, { 'content-type': 'text/html' }).end('<p>Connected. You may return to your app.</p>');
      return true;
    }
    return false;
  }

  private clientOf(req: IncomingMessage, form: Record<string, string>): string | undefined {
    let id: string | undefined;
    let secret: string | undefined;
    const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (basic !== undefined) {
      const [rawId, rawSecret] = Buffer.from(basic, 'base64').toString().split(':');
      id = decodeURIComponent(rawId ?? '');
      secret = decodeURIComponent(rawSecret ?? '');
    } else {
      id = form.client_id;
      secret = form.client_secret;
    }
    const client = id === undefined ? undefined : this.clients.get(id);
    return client !== undefined && client.secret === secret ? id : undefined;
  }

  private async token(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const form = Object.fromEntries(new URLSearchParams(await readBody(req)));
    if (this.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.delayMs));
    const send = (status: number, body: Record<string, unknown>) => {
      this.exchanges.push({
        authorization: req.headers.authorization,
        form,
        status,
        ...(typeof body.error === 'string' ? { error: body.error } : {}),
      });
      res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify(body));
    };
    const replaced = this.answer?.(form);
    if (replaced !== undefined) {
      this.exchanges.push({ authorization: req.headers.authorization, form, status: replaced.status });
      res
        .writeHead(replaced.status, { 'content-type': replaced.contentType ?? 'application/json' })
        .end(typeof replaced.body === 'string' ? replaced.body : JSON.stringify(replaced.body));
      return;
    }
    const clientId = this.clientOf(req, form);
    if (clientId === undefined) return send(401, { error: 'invalid_client' });
    if (form.grant_type !== TOKEN_EXCHANGE) return send(400, { error: 'unsupported_grant_type' });
    const client = this.clients.get(clientId)!;
    if (client.resource === undefined) return send(400, { error: 'unauthorized_client' });
    if (form.subject_token_type !== ACCESS_TOKEN_TYPE || !form.subject_token) return send(400, { error: 'invalid_request' });
    let sub: string;
    try {
      const { payload } = await jwtVerify(form.subject_token, createLocalJWKSet({ keys: this.keys.map((k) => k.publicJwk) }), {
        issuer: this.issuer,
        audience: client.resource,
      });
      if (typeof payload.sub !== 'string' || (payload.jti !== undefined && this.revoked.has(payload.jti))) throw new Error('not live');
      sub = payload.sub;
    } catch {
      return send(400, { error: 'invalid_grant' });
    }
    const providerName = form.audience ?? '';
    const provider = this.providers.get(providerName);
    if (provider === undefined || !provider.resources.includes(client.resource)) return send(400, { error: 'invalid_target' });
    const token = this.connections.get(sub)?.get(providerName);
    if (token === undefined) {
      const ticket = randomBytes(16).toString('base64url');
      this.tickets.set(ticket, { sub, provider: providerName, resource: client.resource });
      return send(400, {
        error: 'interaction_required',
        error_description: `Connect your ${providerName} account to continue`,
        connect_uri: `${this.issuer}/connect/${ticket}`,
        connect_expires_in: 600,
        provider: providerName,
        ...(provider.displayName !== undefined ? { provider_display_name: provider.displayName } : {}),
      });
    }
    return send(200, {
      access_token: token,
      issued_token_type: ACCESS_TOKEN_TYPE,
      token_type: 'Bearer',
      ...(this.expiresIn !== undefined ? { expires_in: this.expiresIn } : {}),
      scope: 'files.read',
    });
  }
}
