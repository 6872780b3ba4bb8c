/**
 * What an MCP server advertises of the authorization extensions (spec/extensions/auth-overview.mdx:
 * servers advertise theirs in the capabilities returned by `server/discover`), read on the
 * 2026-07-28 wire, and an assertion on it for users' tests of their own servers.
 */
import { AUTH_EXTENSIONS } from '@mcp-auth-kit/protocol';
import { mcpRequest } from './mcp-request.js';
import { ResponseAssertionError } from './response-report.js';
import type { McpConnectionOptions } from './mcp-session.js';
import { MCP_PROTOCOL_VERSION, type McpResponse } from './mcp-wire.js';

export interface AdvertisedExtensions {
  /** Every extension identifier in `capabilities.extensions`, authorization or not, in order. */
  extensions: string[];
  /** The `server/discover` response. */
  response: McpResponse;
}

/** Sends `server/discover` (2026-07-28) and returns the identifiers under `result.capabilities.extensions`. */
export async function discoverExtensions(
  url: string,
  options: Omit<McpConnectionOptions, 'protocolVersion'> = {},
): Promise<AdvertisedExtensions> {
  const response = await mcpRequest(url, { ...options, protocolVersion: MCP_PROTOCOL_VERSION, method: 'server/discover' });
  const extensions = response.body?.result?.capabilities?.extensions;
  return {
    extensions: extensions && typeof extensions === 'object' && !Array.isArray(extensions) ? Object.keys(extensions) : [],
    response,
  };
}

/**
 * Asserts that the server's `server/discover` advertises exactly `expected` among the MCP
 * authorization extensions (`io.modelcontextprotocol/oauth-client-credentials`,
 * `io.modelcontextprotocol/enterprise-managed-authorization`); other extensions are ignored.
 *
 * @throws {@link ResponseAssertionError} with the response when the answer is no result, or the
 * advertised set differs.
 */
export async function assertAuthExtensions(
  url: string,
  expected: readonly string[],
  options: Omit<McpConnectionOptions, 'protocolVersion'> = {},
): Promise<AdvertisedExtensions> {
  const advertised = await discoverExtensions(url, options);
  const { response } = advertised;
  if (response.status !== 200 || !response.body?.result)
    throw new ResponseAssertionError('Expected a server/discover result', response, {
      actual: response.status,
      expected: 200,
      operator: 'server/discover',
    });
  const auth = advertised.extensions.filter((e) => (AUTH_EXTENSIONS as readonly string[]).includes(e)).sort();
  const wanted = [...expected].sort();
  if (auth.length !== wanted.length || auth.some((e, i) => e !== wanted[i]))
    throw new ResponseAssertionError(
      `Expected the authorization extensions [${wanted.join(', ')}] in server/discover capabilities.extensions, got [${auth.join(', ')}]`,
      response,
      { actual: auth, expected: wanted, operator: 'server/discover' },
    );
  return advertised;
}
