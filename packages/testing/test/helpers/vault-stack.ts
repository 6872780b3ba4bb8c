/**
 * Our authorization server with its token vault on, as the testing kit runs it
 * (`startTestAuthorizationServer` with `thirdParty`), the kit's provider as its `drive`, and an
 * MCP server's confidential client: what a user's CI sets up to test a tool that calls a third
 * party. The RFC 8693 exchange is made here as the MCP server makes it.
 */
import { randomBytes } from 'node:crypto';
import { TOKEN_EXCHANGE_GRANT_TYPE } from '@mcp-auth-kit/authorization-server';
import {
  startTestAuthorizationServer,
  startThirdPartyProvider,
  type StartThirdPartyProviderOptions,
  type TestAuthorizationServer,
  type TestUser,
  type ThirdPartyProvider,
} from '@mcp-auth-kit/testing';

/** The MCP server under test: nothing listens there, the exchange is all that is needed of it. */
export const RESOURCE = 'http://127.0.0.1:1/mcp';
export const MCP_CLIENT = { id: 'files-mcp-server', secret: randomBytes(18).toString('base64url') };

/** The MCP server's confidential client at our AS: it may only exchange its users' tokens (RFC 8693). */
const mcpServerClient = {
  client_id: MCP_CLIENT.id,
  client_secret: MCP_CLIENT.secret,
  resource: RESOURCE,
  grant_types: [TOKEN_EXCHANGE_GRANT_TYPE],
  response_types: [],
  redirect_uris: [],
};

export interface VaultStack {
  as: TestAuthorizationServer;
  drive: ThirdPartyProvider;
  /** The exchange of an MCP access token for the user's drive token (RFC 8693), as the MCP server asks it. */
  exchange(mcpToken: string): Promise<{ status: number; body: Record<string, unknown> }>;
  close(): Promise<void>;
}

export async function startVaultStack(users: TestUser[], drive: StartThirdPartyProviderOptions): Promise<VaultStack> {
  const provider = await startThirdPartyProvider(drive);
  const vault = provider.registerClient({ clientId: 'mcp-auth-kit', name: 'MCP auth kit', redirectUris: [] });
  const as = await startTestAuthorizationServer({
    resources: { [RESOURCE]: ['files:read'] },
    users,
    autoLogin: false,
    clients: [mcpServerClient],
    config: {
      thirdParty: {
        encryptionKey: randomBytes(32).toString('base64url'),
        providers: {
          drive: {
            issuer: provider.issuer,
            clientId: vault.clientId,
            clientSecret: vault.clientSecret,
            scopes: ['files.read'],
            resources: [RESOURCE],
            displayName: 'Drive',
          },
        },
      },
    },
  });
  // The provider's redirect URI for our AS: its connect callback.
  provider.registerClient({ ...vault, redirectUris: [`${as.issuer}/connect/callback`] });
  return {
    as,
    drive: provider,
    async exchange(mcpToken) {
      const res = await fetch(as.metadata.token_endpoint, {
        method: 'POST',
        headers: { authorization: `Basic ${Buffer.from(`${MCP_CLIENT.id}:${MCP_CLIENT.secret}`).toString('base64')}` },
        body: new URLSearchParams({
          grant_type: TOKEN_EXCHANGE_GRANT_TYPE,
          subject_token: mcpToken,
          subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
          audience: 'drive',
        }),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    },
    async close() {
      await as.close();
      await provider.close();
    },
  };
}
