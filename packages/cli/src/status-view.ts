import type { AccessCheck, ServerStatus } from '@mcp-auth-kit/client';

/** `status` text: where the tokens of one server stand, and what to do when they do not work. */
export function formatStatus(row: ServerStatus, now: number, check?: AccessCheck | Error): string {
  try {
    return statusLines(row, now, check);
  } catch {
    // one row the store holds in a shape this version cannot show never hides the others
    return `${String(row.server)}\n  status:   cannot be shown (unexpected values in the store); run \`mcp-auth-kit logout ${String(row.server)}\`\n`;
  }
}

function statusLines(row: ServerStatus, now: number, check?: AccessCheck | Error): string {
  const lines = [
    row.server,
    `  resource: ${row.resource}`,
    `  issuer:   ${row.issuer}`,
    ...(row.scope ? [`  scope:    ${row.scope}`] : []),
    `  status:   ${tokenState(row, now)}`,
  ];
  if (check) lines.push(`  check:    ${checkLine(row, check)}`);
  return `${lines.join('\n')}\n`;
}

/** True when the stored access token is past its `expires_at`. */
export function isExpired(row: { expires_at?: number | undefined }, now: number): boolean {
  return row.expires_at !== undefined && row.expires_at <= now;
}

function tokenState(row: ServerStatus, now: number): string {
  const login = `run \`mcp-auth-kit login ${row.server}\` to log in again`;
  if (row.expires_at === undefined) {
    return row.authenticated ? 'logged in (the server gave the access token no expiry)' : `no usable tokens; ${login}`;
  }
  const at = `${when(row.expires_at)} (${relative(row.expires_at - now)})`;
  if (!isExpired(row, now)) return `logged in; access token valid until ${at}`;
  return row.has_refresh_token
    ? `access token expired at ${at}; it is refreshed on next use (a refresh token is stored)`
    : `expired at ${at}, no refresh token; ${login}`;
}

function checkLine(row: ServerStatus, check: AccessCheck | Error): string {
  if (check instanceof Error) return `could not check: ${check.message}`;
  const login = `run \`mcp-auth-kit login ${row.server}\``;
  const why = check.error ? ` (${check.error}${check.error_description ? `: ${check.error_description}` : ''})` : '';
  switch (check.result) {
    case 'valid':
      return `valid: the MCP server accepted the access token (HTTP ${check.status})${check.protocolVersion ? ` over MCP ${check.protocolVersion}` : ''}`;
    case 'expired':
      return `expired: the MCP server refused the expired access token${why}; ${
        row.has_refresh_token ? 'the next command refreshes it' : login
      }`;
    case 'revoked':
      return `revoked: the MCP server refused the access token before its expiry${why}; ${login}`;
    case 'no_tokens':
      return `no usable access token stored; ${login}`;
    default:
      // a 4xx other than 401/403 comes before the token was judged (a revision or request the server refused)
      return (check.status ?? 500) >= 500
        ? `unknown: the MCP server failed (HTTP ${check.status}) before deciding; try again later`
        : `unknown: the MCP server answered HTTP ${check.status} without deciding on the access token; check that the URL is its MCP endpoint`;
  }
}

function when(seconds: number): string {
  const date = new Date(seconds * 1000);
  // a date past what Date can hold (year 275760) has no text: said so, never thrown
  if (!Number.isFinite(date.getTime())) return 'a time out of range';
  return date
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, ' UTC');
}

function relative(delta: number): string {
  const abs = Math.abs(delta);
  if (!Number.isFinite(abs) || abs > 100 * 365 * 86_400) return delta >= 0 ? 'in more than 100 years' : 'more than 100 years ago';
  const amount =
    abs < 90
      ? `${abs} s`
      : abs < 5400
        ? `${Math.round(abs / 60)} min`
        : abs < 172_800
          ? `${Math.round(abs / 3600)} h`
          : `${Math.round(abs / 86_400)} days`;
  return delta >= 0 ? `in ${amount}` : `${amount} ago`;
}
