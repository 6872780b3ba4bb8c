/**
 * The clients of the test authorization server: the kit's pre-registered public client, how a
 * helper's `client` option becomes a client, and RFC 7591 registration of more.
 */
import type { AuthorizationServerConfig } from '@mcp-auth-kit/authorization-server';
import { AuthorizationFlowError, type AsEndpoints } from './code-flow.js';
import type { RegisteredClient, TestClient } from './test-authorization-server-options.js';

/** Nothing listens there: the helpers' flows stop at the redirect and read the code from it. */
export const DEFAULT_REDIRECT = 'http://127.0.0.1/callback';
export const KIT_CLIENT_ID = 'mcp-auth-kit-testing';

/** The kit's public native client (`authorization_code` + `refresh_token`, PKCE). */
export const KIT_CLIENT: NonNullable<AuthorizationServerConfig['clients']>[number] = {
  client_id: KIT_CLIENT_ID,
  client_name: 'mcp-auth-kit testing client',
  application_type: 'native',
  redirect_uris: [DEFAULT_REDIRECT],
  token_endpoint_auth_method: 'none',
  grant_types: ['authorization_code', 'refresh_token'],
  response_types: ['code'],
};

export type ResolvedClient = Required<Omit<TestClient, 'clientSecret'>> & { clientSecret?: string };

/** A client_id, a client, or nothing (the kit's client), with the default redirect URI filled in. */
export function resolveClient(client: string | TestClient | undefined): ResolvedClient {
  if (client === undefined) return { clientId: KIT_CLIENT_ID, redirectUri: DEFAULT_REDIRECT };
  if (typeof client === 'string') return { clientId: client, redirectUri: DEFAULT_REDIRECT };
  return { ...client, redirectUri: client.redirectUri ?? DEFAULT_REDIRECT };
}

/**
 * RFC 7591 Dynamic Client Registration at the AS's registration endpoint. Defaults: a public
 * native client with the kit's redirect URI and the authorization_code + refresh_token grants.
 */
export async function registerTestClient(metadata: AsEndpoints, extra: Record<string, unknown>): Promise<RegisteredClient> {
  if (!metadata.registration_endpoint) throw new Error('the AS advertises no registration_endpoint');
  const res = await fetch(metadata.registration_endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({
      client_name: 'mcp-auth-kit testing (DCR)',
      application_type: 'native',
      redirect_uris: [DEFAULT_REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      ...extra,
    }),
  });
  const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  if (res.status !== 201 || typeof body.client_id !== 'string') {
    throw new AuthorizationFlowError(
      `registration endpoint: HTTP ${res.status} ${String(body.error ?? '')}`.trim(),
      body.error as string | undefined,
    );
  }
  const redirectUris = body.redirect_uris as string[] | undefined;
  return {
    clientId: body.client_id,
    ...(typeof body.client_secret === 'string' && { clientSecret: body.client_secret }),
    redirectUri: redirectUris?.[0] ?? DEFAULT_REDIRECT,
    registration: body,
  };
}
