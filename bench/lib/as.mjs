/**
 * Our authorization server (public entry `createAuthorizationServer`) on a counting loopback
 * listener, with DEV_AUTO_LOGIN and one pre-registered public client, so tokens come from the
 * real code flow without pages.
 */
import { createAuthorizationServer, silentLogger } from '@mcp-auth-kit/authorization-server';
import { listen } from './servers.mjs';
import { exchangeCode, fetchMetadata, obtainCode } from './oauth.mjs';

export const BENCH_CLIENT = {
  clientId: 'bench-public-client',
  redirectUri: 'http://127.0.0.1/callback',
};
export const DEMO_SCOPES = { 'notes:read': 'Read your notes', 'notes:write': 'Create and change your notes' };

/** The configuration every bench AS runs with (case 7 starts it in child processes too). */
export function benchAsConfig({ issuer, resource, storage = { kind: 'memory' }, accessTokenTTL = 3600, cimd, extra = {} }) {
  return {
    issuer,
    resources: [{ resource, scopes: DEMO_SCOPES }],
    storage,
    devAutoLogin: 'bench-user',
    accessTokenTTL,
    registration: { rateLimit: false },
    cimd: cimd ?? { allowPrivateNetwork: false },
    clients: [
      {
        client_id: BENCH_CLIENT.clientId,
        client_name: 'bench client',
        application_type: 'native',
        redirect_uris: [BENCH_CLIENT.redirectUri],
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
      },
    ],
    logger: silentLogger,
    ...extra,
  };
}

export async function startBenchAs({ resource, storage = { kind: 'memory' }, accessTokenTTL = 3600, cimd, extra = {} }) {
  const listener = await listen();
  const issuer = listener.origin;
  let as;
  try {
    as = await createAuthorizationServer(benchAsConfig({ issuer, resource, storage, accessTokenTTL, cimd, extra }));
  } catch (error) {
    await listener.close();
    throw error;
  }
  listener.setHandler(as.app);
  const metadata = await fetchMetadata(issuer);
  return {
    issuer,
    metadata,
    listener,
    server: as,
    /** A token response from the real code flow for the bench client. */
    async issueTokens(scope = 'notes:read') {
      const client = { ...BENCH_CLIENT, resource };
      const code = await obtainCode({ metadata, ...client, scope });
      return exchangeCode(metadata, client, code);
    },
    async close() {
      await listener.close();
      await as.close();
    },
  };
}
