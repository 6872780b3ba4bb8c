import { terminalText, type TerminalText } from '@mcp-auth-kit/protocol';
import type { McpAuthEvent } from '@mcp-auth-kit/client';
import { accountLabel } from './account.js';

/** The progress line (stderr) of a client event; undefined for events the CLI prints elsewhere. */
export function describeEvent(e: McpAuthEvent): TerminalText | undefined {
  switch (e.type) {
    case 'discovered':
      return terminalText`Discovered ${e.resource} (authorization server ${e.issuer})`;
    case 'authorization_server_changed':
      return terminalText`The MCP server now names another authorization server (${e.to} instead of ${e.from}): registering there`;
    case 'registered':
      return e.source === 'cimd'
        ? terminalText`Using this client's metadata document at ${e.issuer}`
        : terminalText`Registered this client at ${e.issuer} (client_id ${e.client_id})`;
    case 'waiting_for_callback':
      return terminalText`Waiting for you to sign in and allow access in the browser…`;
    case 'authorized':
      return terminalText`Authorized${e.scope ? ` (scope: ${e.scope})` : ''}${e.account ? ` ${accountLabel(e.account, e.issuer)}` : ''}`;
    case 'refreshed':
      return terminalText`Access token expired: refreshed it`;
    case 'refresh_failed':
      return terminalText`Could not refresh the access token: ${e.issuer} refused the refresh token (${e.error}${
        e.error_description ? `: ${e.error_description}` : ''
      }). A new sign-in in the browser is needed.`;
    case 'step_up':
      return terminalText`More permissions needed: requesting ${e.scope ?? 'a new authorization'}`;
    default:
      return undefined;
  }
}
