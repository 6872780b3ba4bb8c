/** The admin tool's `grants …` commands: the clients a user approved, and revoking one approval. */
import { terminalText, type TerminalText } from '@mcp-auth-kit/protocol';
import { ADMIN_COMMAND, type AdminCommand, type AdminContext, AdminError, CLI_ACTOR, UsageError, userRow } from './admin-command.js';
import { signedTokenLifetimes } from './admin-config.js';

/**
 * What `grants revoke` stops, and when (see revokeRememberedGrant and jwt-introspection.ts in
 * the authorization server): the grant and its refresh tokens and codes are gone at once, but
 * a JWT access token is checked by resource servers on their own until it expires.
 */
function revokedGrantEffects(username: string, clientId: string, accessTokenTtl: number | undefined, published: boolean): TerminalText[] {
  const lifetime = accessTokenTtl === undefined ? 'their configured lifetime (accessTokenTTL)' : `${accessTokenTtl} s`;
  return [
    terminalText`revoked the grant of ${username} for ${clientId}:`,
    terminalText`  now: its refresh tokens and unused authorization codes stop working, and the next authorization asks for consent again;`,
    terminalText`  access tokens already issued (JWTs) stay valid until they expire, up to ${lifetime} after issue,`,
    published
      ? terminalText`  except at resource servers that check them by token introspection (RFC 7662) or follow the Redis revocation signal (REDIS_URL, published now), which refuse them within seconds.`
      : terminalText`  except at resource servers that check them by token introspection (RFC 7662), which refuse them now.`,
  ];
}

async function listGrants({ io, service, findUser }: AdminContext): Promise<void> {
  const account = await findUser();
  const grants = await service.listGrants({ accountId: account.id });
  if (!grants.length) io.out(terminalText`${account.username} has approved no client`);
  for (const g of grants) {
    const scopes = Object.entries(g.resources)
      .map(([resource, list]) => `${resource} [${list.join(' ')}]`)
      .join(', ');
    const until = g.expiresAt ? new Date(g.expiresAt * 1000).toISOString() : 'no expiry';
    io.out(userRow([g.clientId, scopes || '(no resource)', `until ${until}`]));
  }
}

async function revokeGrant({ io, env, service, clientArg, findUser }: AdminContext): Promise<void> {
  if (!clientArg) throw new UsageError('grants revoke needs a username and a client_id');
  const account = await findUser();
  if (!(await service.revokeGrant(CLI_ACTOR, account.id, clientArg)))
    throw new AdminError(
      `${account.username} has no grant for client "${clientArg}" (\`${ADMIN_COMMAND} grants list ${account.username}\` lists them)`,
    );
  let accessTokenTtl: number | undefined;
  try {
    accessTokenTtl = signedTokenLifetimes(env).accessToken;
  } catch {
    // An unreadable configuration: name the setting instead of a number.
  }
  for (const line of revokedGrantEffects(account.username, clientArg, accessTokenTtl, Boolean(env.REDIS_URL?.trim()))) io.out(line);
}

export const GRANT_COMMANDS: Readonly<Record<string, AdminCommand>> = {
  'grants list': listGrants,
  'grants revoke': revokeGrant,
};
