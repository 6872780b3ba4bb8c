/** Starts an authorization server on 127.0.0.1:0 with a memory store for a test. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAuthorizationServer, silentLogger, type AuthorizationServer, type AuthorizationServerConfig } from '../../src/index.js';
import { hashPassword } from '../../src/accounts/passwords.js';

export const RESOURCE = 'http://127.0.0.1:3999/mcp';
export const REDIRECT = 'http://127.0.0.1:7777/callback';

export interface RunningAs {
  url: string;
  as: AuthorizationServer;
  server: Server;
  close(): Promise<void>;
}

export type TestConfig = Partial<AuthorizationServerConfig> & { issuerPath?: string };

export async function startAs(overrides: TestConfig = {}): Promise<RunningAs> {
  let handler: (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => void = (_q, s) => {
    s.statusCode = 503;
    s.end();
  };
  const server = createServer((req, res) => handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  const { issuerPath, ...rest } = overrides;
  let as: AuthorizationServer;
  try {
    as = await createAuthorizationServer({
      issuer: `${url}${issuerPath ?? ''}`,
      resources: [{ resource: RESOURCE, scopes: { 'notes:read': 'Read your notes', 'notes:write': 'Change your notes' } }],
      storage: { kind: 'memory' },
      logger: silentLogger,
      users: [{ username: 'alice', password: 'alice-password' }],
      ...rest,
    });
  } catch (err) {
    server.close();
    throw err;
  }
  handler = as.app as unknown as typeof handler;
  return {
    url,
    as,
    server,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await as.close();
    },
  };
}

/** The registration metadata of a confidential web client that authenticates with HTTP Basic (RFC 6749 §2.3.1). */
export const CONFIDENTIAL_WEB_CLIENT = { token_endpoint_auth_method: 'client_secret_basic', application_type: 'web' } as const;

export async function registerClient(base: string, metadata: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
  const res = await fetch(`${base}/reg`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({
      redirect_uris: [REDIRECT],
      application_type: 'native',
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      client_name: 'Test Client',
      ...metadata,
    }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

export function authorizeUrl(issuer: string, params: Record<string, string | undefined>): string {
  const url = new URL(`${issuer}/auth`);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, v);
  return url.href;
}

export async function tokenRequest(issuer: string, params: Record<string, string>, headers: Record<string, string> = {}) {
  const res = await fetch(`${issuer}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(params),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, any> };
}

export function decodeJwt(token: string): { header: Record<string, any>; payload: Record<string, any> } {
  const [h, p] = token.split('.');
  return {
    header: JSON.parse(Buffer.from(h!, 'base64url').toString()),
    payload: JSON.parse(Buffer.from(p!, 'base64url').toString()),
  };
}

/** Adds an enabled local account `username` whose password is `<username>-password`, straight into the store. */
export async function addAccount(t: RunningAs, id: string, username: string, extra: { displayName?: string } = {}): Promise<void> {
  await t.as.store.accounts.create({ id, username, passwordHash: await hashPassword(`${username}-password`), disabled: false, ...extra });
}
