import type { AuthInfo } from '@modelcontextprotocol/server';

/** Who is calling, as established by the validated access token. */
export interface Caller {
  /** Partition key for per-caller data: the token's `sub`, else `client:<client_id>`. */
  subject: string;
  clientId: string;
  scopes: string[];
  issuer?: string;
  resource?: string;
  expiresAt?: number;
}

function stringOrUndefined(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

/**
 * Reads the caller from the SDK's pass-through `authInfo`. Returns undefined when the request
 * reached the MCP layer unauthenticated (only possible if the app is mounted without protection).
 */
export function callerFrom(authInfo: AuthInfo | undefined): Caller | undefined {
  if (!authInfo) return undefined;
  const extra = authInfo.extra ?? {};
  const sub = stringOrUndefined(extra['sub']);
  // A client acting on its own behalf (client_credentials) may carry no user subject; prefix so
  // it can never share a notes partition with a user whose name equals a client_id.
  const subject = sub ?? `client:${authInfo.clientId}`;
  const caller: Caller = { subject, clientId: authInfo.clientId, scopes: [...authInfo.scopes] };
  const issuer = stringOrUndefined(extra['iss']);
  if (issuer) caller.issuer = issuer;
  if (authInfo.resource) caller.resource = authInfo.resource.href;
  if (typeof authInfo.expiresAt === 'number') caller.expiresAt = authInfo.expiresAt;
  return caller;
}
