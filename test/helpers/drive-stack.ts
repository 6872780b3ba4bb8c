import { startThirdPartyProvider, type ThirdPartyProvider } from '@mcp-auth-kit/testing';
import { startDemoStack, type DemoStack } from './stack.js';

/**
 * The demo stack with third-party authorization (issue 41): the testing kit's drive as a provider
 * of our AS's token vault, and the demo MCP server as the confidential client that exchanges its
 * MCP tokens for drive tokens (`drive_list_files`). Drive tokens live 2 s, so that a grant the
 * drive revokes ends the AS's connection at its next refresh ({@link DriveStack.disconnectAtDrive}).
 */
export interface DriveStack {
  stack: DemoStack;
  drive: ThirdPartyProvider;
  /** The user's drive grant ends (revoked at the drive) and the AS's copy of its token expires. */
  disconnectAtDrive(): Promise<void>;
  close(): Promise<void>;
}

const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const MCP_CLIENT = { clientId: 'demo-mcp-e2e', clientSecret: 'e2e-mcp-server-client-secret' };
const DRIVE_CLIENT = { clientId: 'kit-at-drive', clientSecret: 'e2e-drive-client-secret' };
/** Our AS's demo user (DEV_AUTO_LOGIN) and the drive's account of the same person. */
export const AS_USER = { username: 'demo', password: 'demo-password' };
export const DRIVE_USER = { username: 'demo', password: 'demo-drive-password' };

export async function startDriveStack(): Promise<DriveStack> {
  const drive = await startThirdPartyProvider({
    hostname: 'localhost',
    port: 0,
    displayName: 'Drive',
    accessTokenLifetime: 2,
    users: [{ ...DRIVE_USER, displayName: 'Demo', files: [{ name: 'plan.md', content: '# plan' }] }],
  });
  const stack = await startDemoStack({
    asConfig: (resource) => ({
      clients: [
        {
          client_id: MCP_CLIENT.clientId,
          client_secret: MCP_CLIENT.clientSecret,
          resource,
          grant_types: [TOKEN_EXCHANGE],
          response_types: [],
          redirect_uris: [],
        },
      ] as never,
      thirdParty: {
        providers: {
          drive: { issuer: drive.issuer, ...DRIVE_CLIENT, scopes: ['files.read'], resources: [resource], displayName: 'Drive' },
        },
      },
    }),
    drive: { api: drive.apiBase, ...MCP_CLIENT },
  });
  drive.registerClient({ ...DRIVE_CLIENT, name: 'e2e kit', redirectUris: [`${stack.issuer}/connect/callback`] });
  return {
    stack,
    drive,
    async disconnectAtDrive() {
      drive.revokeGrants(DRIVE_USER.username);
      await new Promise((r) => setTimeout(r, 2_500));
    },
    async close() {
      await stack.close();
      await drive.close();
    },
  };
}
