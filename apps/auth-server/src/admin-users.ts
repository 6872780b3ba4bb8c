/** The admin tool's `user …` commands: local accounts, their passwords, state, admin role and linked identities. */
import { hashPassword, revokeAccountGrants } from '@mcp-auth-kit/authorization-server';
import { describeSource, operatorOwns } from '@mcp-auth-kit/authorization-server/ops';
import { displaySafeText, terminalText, usernameProblem } from '@mcp-auth-kit/protocol';
import {
  ADMIN_COMMAND,
  type AdminCommand,
  type AdminContext,
  AdminError,
  type AdminIo,
  CLI_ACTOR,
  RefusedError,
  UsageError,
  userRow,
} from './admin-command.js';

const USERNAME_RULE =
  'a username is NFKC text without control, invisible or non-ASCII space characters, no leading, trailing or double spaces, letters of one of Latin/Greek/Cyrillic, at most 100 characters (254 with @)';

async function newPassword(io: AdminIo): Promise<string> {
  const password = await io.readPassword();
  if (!password) {
    throw new AdminError('no password given: type it at the prompt, pipe it as the first line of stdin, or set AS_ADMIN_PASSWORD');
  }
  if (password.length < 8) throw new AdminError('the password must have at least 8 characters; nothing changed');
  return password;
}

async function addUser({ io, store, service, values, requireName }: AdminContext): Promise<void> {
  const username = requireName();
  // Before the password prompt; the name itself is not echoed (it may hold control characters).
  const problem = usernameProblem(username);
  if (problem) throw new RefusedError(`username refused (${problem}): ${USERNAME_RULE}`);
  if (await store.accounts.findByUsername(username)) throw new AdminError(`user "${username}" already exists; nothing changed`);
  // Stored as every page and client will show it: the one display rule (displaySafeText).
  const givenName = values['display-name'];
  const displayName = givenName === undefined ? undefined : displaySafeText(givenName);
  if (givenName !== undefined && displayName === undefined) throw new RefusedError('display name refused: nothing visible is left');
  const account = await service.createUser(CLI_ACTOR, { username, password: await newPassword(io), displayName });
  io.out(terminalText`created user ${account.username} (sub ${account.id})`);
}

async function setPassword({ io, store, values, findUser }: AdminContext): Promise<void> {
  const account = await findUser();
  // The demo seed is the operator's own (its public password is what is being replaced).
  const own = operatorOwns(account) || account.source === 'demo';
  if (!own && !values.adopt)
    throw new RefusedError(
      `"${account.username}" was made by ${describeSource(account.source)}, not by the operator: a password set here would let ` +
        'its creator and whoever gets the password into one account. Nothing changed. To take the account over, run ' +
        `\`${ADMIN_COMMAND} user set-password ${account.username} --adopt\` (it unlinks its upstream identities and revokes its grants)`,
    );
  const passwordHash = await hashPassword(await newPassword(io));
  if (own) {
    await store.accounts.update(account.id, { passwordHash, source: 'operator' });
    io.out(terminalText`password changed for ${account.username}`);
    return;
  }
  // Adoption: the sign-up source can no longer enter, and what it was issued stops.
  const unlinked = account.upstreamIdentities ?? [];
  await store.accounts.update(account.id, { passwordHash, upstreamIdentities: [], source: 'operator' });
  const revoked = await revokeAccountGrants(store, account.id);
  // Its creator's third-party accounts (the token vault) do not pass to the operator either.
  const disconnected = await store.connections.deleteAccount(account.id);
  io.out(terminalText`adopted ${account.username} as an operator account and changed its password`);
  for (const identity of unlinked) io.out(terminalText`  unlinked ${identity}`);
  io.out(terminalText`  revoked ${revoked.length} grant(s)`);
  io.out(terminalText`  deleted ${String(disconnected)} third-party connection(s)`);
}

async function setDisabled({ io, service, action, findUser }: AdminContext): Promise<void> {
  const account = await findUser();
  // Disabling goes through the store's revocation path (the service): resource servers following
  // the Redis signal refuse its access tokens now, re-enabling later revives no refresh token,
  // and the token vault's connections go too.
  const done = await service.setUserDisabled(CLI_ACTOR, account.id, action === 'disable');
  if (action === 'enable') {
    io.out(terminalText`${account.username} enabled (tokens issued before it was disabled stay revoked)`);
    return;
  }
  io.out(
    terminalText`${account.username} disabled; revoked ${done.revokedGrants.length} grant(s) and their tokens; deleted ${String(done.deletedConnections)} third-party connection(s)`,
  );
}

async function linkIdentity({ io, service, key, action, positionals, findUser }: AdminContext): Promise<void> {
  const account = await findUser();
  const [, , , issuer, subject] = positionals;
  if (!issuer || !subject || /\s/.test(issuer) || /\s/.test(subject))
    throw new UsageError(`${key} needs a username, an issuer and a subject`);
  if (action === 'link') {
    await service.linkIdentity(CLI_ACTOR, account.id, issuer, subject);
    io.out(terminalText`${account.username} can sign in as ${subject} at ${issuer}`);
  } else {
    await service.unlinkIdentity(CLI_ACTOR, account.id, issuer, subject);
    io.out(terminalText`unlinked ${subject} at ${issuer} from ${account.username}`);
  }
}

async function listUsers({ io, service }: AdminContext): Promise<void> {
  for (const a of await service.listUsers()) {
    // Linked identities (upstream sign-in, ID-JAG just-in-time accounts) as "<issuer> <sub>".
    const linked = a.linkedIdentities.join(', ');
    const status = `${a.disabled ? 'disabled' : 'active'}${a.admin ? '+admin' : ''}`;
    io.out(userRow([a.username, a.id, status, a.displayName ?? '', ...(linked ? [linked] : [])]));
  }
}

async function setAdmin({ io, service, action, findUser }: AdminContext): Promise<void> {
  const account = await findUser();
  await service.setUserAdmin(CLI_ACTOR, account.id, action === 'grant-admin');
  io.out(
    action === 'grant-admin'
      ? terminalText`${account.username} is an admin of the operator console`
      : terminalText`${account.username} is no longer an admin of the operator console`,
  );
}

export const USER_COMMANDS: Readonly<Record<string, AdminCommand>> = {
  'user add': addUser,
  'user set-password': setPassword,
  'user reset-password': setPassword,
  'user disable': setDisabled,
  'user enable': setDisabled,
  'user list': listUsers,
  'user link': linkIdentity,
  'user unlink': linkIdentity,
  'user grant-admin': setAdmin,
  'user revoke-admin': setAdmin,
};
