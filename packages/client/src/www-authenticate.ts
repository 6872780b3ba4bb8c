import { parseWwwAuthenticate as parseChallenges, WwwAuthenticateParseError, type Challenge } from '@mcp-auth-kit/protocol';
import { ERR, McpAuthError } from './errors.js';

export type { Challenge };

/**
 * The shared parser (@mcp-auth-kit/protocol) with the client's error code: malformed input throws
 * `MCP_AUTH_WWW_AUTHENTICATE_PARSE`.
 */
export function parseWwwAuthenticate(header: string): Challenge[] {
  try {
    return parseChallenges(header);
  } catch (cause) {
    if (cause instanceof WwwAuthenticateParseError) throw new McpAuthError(ERR.WWW_AUTHENTICATE_PARSE, cause.message, { cause });
    throw cause;
  }
}

/**
 * The OAuth challenge of a response for MCP purposes: Bearer or DPoP (RFC 9449 §7.1), preferring
 * the one that carries an `error`; parameters of the other one (e.g. `resource_metadata`) fill
 * the gaps. Parse errors yield undefined.
 */
export function oauthChallenge(response: Response): Challenge | undefined {
  const header = response.headers.get('www-authenticate');
  if (!header) return undefined;
  let all: Challenge[];
  try {
    all = parseWwwAuthenticate(header).filter((c) => c.scheme === 'bearer' || c.scheme === 'dpop');
  } catch {
    return undefined;
  }
  const chosen = all.find((c) => c.params.error) ?? all.find((c) => c.scheme === 'bearer') ?? all[0];
  if (!chosen) return undefined;
  const merged: Record<string, string> = {};
  for (const c of all) Object.assign(merged, c.params);
  return { scheme: chosen.scheme, params: { ...merged, ...chosen.params } };
}

/** The Bearer challenge of a response, if any (parse errors yield undefined: treat as no guidance). */
export function bearerChallenge(response: Response): Challenge | undefined {
  const header = response.headers.get('www-authenticate');
  if (!header) return undefined;
  try {
    return parseWwwAuthenticate(header).find((c) => c.scheme === 'bearer');
  } catch {
    return undefined;
  }
}
