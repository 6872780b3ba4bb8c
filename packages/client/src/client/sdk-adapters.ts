import type { FetchLike } from '../http.js';
import type { McpAuthClient } from './mcp-auth-client.js';

/**
 * An `AuthProvider` for the SDK v2 transports' `authProvider` option (`token()` before each
 * request, `onUnauthorized()` on 401). Prefer {@link createAuthFetch}: through this interface the
 * SDK cannot hand over 403 step-up nor send DPoP proofs, so this adapter always asks for Bearer
 * tokens only where the AS/PRM do not require DPoP.
 */
export function createSdkAuthProvider(client: McpAuthClient, serverUrl: string | URL) {
  return {
    async token(): Promise<string | undefined> {
      const tokens = await client.getTokens(serverUrl);
      return tokens && !tokens.dpop_jkt ? tokens.access_token : undefined;
    },
    async onUnauthorized(ctx: { response: Response }): Promise<void> {
      await client.handleUnauthorized(serverUrl, ctx.response);
    },
  };
}

/** An authenticated fetch bound to a client (for the MCP SDK transports' `fetch` option). */
export function createAuthFetch(client: McpAuthClient): FetchLike {
  return (input, init) => client.fetch(input, init);
}
