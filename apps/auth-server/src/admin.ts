/**
 * Operator commands on the AS store (same DATA_DIR / DATABASE_URL as the server):
 * users, grants, signing and cookie keys. Passwords are read from stdin or AS_ADMIN_PASSWORD, never argv.
 */
import { parseArgs } from 'node:util';
import {
  type Actor,
  type AdminService,
  AdminServiceError,
  createAdminService,
  ID_TOKEN_TTL,
  hashPassword,
  openStore,
  revokeAccountGrants,
  storageConfigFromEnv,
  type StorageConfig,
  type Store,
} from '@mcp-auth-kit/authorization-server';
import { describeSource, operatorOwns } from '@mcp-auth-kit/authorization-server/ops';
import {
  ConfigError,
  displaySafeText,
  joinText,
  ownLayout,
  terminalText,
  type TerminalText,
  usernameProblem,
} from '@mcp-auth-kit/protocol';
import { loadConfig } from './config.js';
import { connectRevocationSignal, longestAccessTokenTtl } from './revocation-signal.js';

/**
 * The admin tool's output, a line at a time. Lines are {@link TerminalText}: what the store holds
 * (usernames, display names, client ids, linked identities) is data, never layout — an escape
 * sequence, OSC 52 / OSC 8, TAB or LF in a stored name prints as a visible escape inside its own
 * row (admin-main.ts writes through the protocol package's one terminal writer).
 */
export interface AdminIo {
  out(line: TerminalText): void;
  err(line: TerminalText): void;
  /**
   * Reads a new password: AS_ADMIN_PASSWORD, else a prompt without echo asked twice (a
   * terminal), else the first line of stdin (a pipe). '' when none was given; throwing an
   * Error (e.g. the two entries differ) stops the command with that message.
   */
  readPassword(): Promise<string>;
}

/** How to run the tool, as named in messages: only commands that exist in this repository. */
export const ADMIN_COMMAND = 'npm run admin --';

export const ADMIN_USAGE = `usage: ${ADMIN_COMMAND} <command>   (from the repository root; or node apps/auth-server/dist/admin-main.js <command>)
  user add <username> [--display-name <name>]   create a local account (password: prompt, first line of stdin, or AS_ADMIN_PASSWORD)
  user set-password <username> [--adopt]        reset the password (same sources); alias: user reset-password.
                                                 An account someone made for themselves (upstream sign-up, ID-JAG)
                                                 is refused unless --adopt: then its upstream identities are unlinked,
                                                 its grants revoked, and it becomes an operator account
  user disable <username> | user enable <username>  disable also revokes its grants (re-enabling revives no token) and deletes its third-party connections
  user list                                     username, sub, status (active/disabled, +admin), display name, linked identities (<issuer> <sub>)
  user grant-admin <username> | user revoke-admin <username>  the operator console's admin role (the first admin comes from here
                                                 or CONSOLE_FIRST_ADMIN)
  user link <username> <issuer> <sub>           let an upstream OpenID Connect identity sign in as this user
  user unlink <username> <issuer> <sub>
  grants list <username>                        the clients the user approved, with resources and scopes
  grants revoke <username> <client_id>          revoke that approval: its refresh tokens stop now, consent is asked again;
                                                 issued access tokens (JWTs) stay valid until they expire
  keys rotate [--retire-after <seconds>]         publish-before-use rotation; the old key stays published for
                                                 86400 s by default, never less than the longest token lifetime
  keys list
  cookie-keys rotate                             a new cookie signing key; the older ones still verify (3 kept)
  clients list                                   every client: origin (configured/dcr/cimd), client_id, status, redirect URIs
  cimd list [pending|approved|denied]            the CIMD approval queue
  cimd approve <client_id> | cimd deny <client_id>  an operator's decision on a CIMD client (deny also revokes its grants)
  cleanup                                        delete expired rows
storage: DATABASE_URL (postgres://…, sqlite:<file>, memory:), else AS_CONFIG_FILE's databaseUrl / dataDir, else DATA_DIR (default .data)
token lifetimes (keys rotate): AS_CONFIG_FILE and the environment, as the server reads them`;

/**
 * The store the server opens with the same environment: DATABASE_URL, else AS_CONFIG_FILE's
 * `databaseUrl` / `dataDir` (the variables win over the file, as for the server), else
 * DATA_DIR. A config file that cannot be read is an error, never a silent local SQLite file.
 */
export function adminStorage(env: NodeJS.ProcessEnv): StorageConfig {
  if (env.DATABASE_URL?.trim()) return storageConfigFromEnv(env);
  if (env.AS_CONFIG_FILE?.trim()) {
    const { config, problems } = loadConfig(env);
    if (problems.length) {
      throw new ConfigError(problems, 'auth-server (cannot tell which store to open; see --print-config)');
    }
    return config.storage ?? storageConfigFromEnv({ DATA_DIR: config.dataDir });
  }
  return storageConfigFromEnv(env);
}

/** The command line cannot be understood: the message, then the usage (exit 2). */
class UsageError extends Error {}

/** A well-formed command that is refused as given (a value out of range): the message alone (exit 2). */
class RefusedError extends Error {}

const USERNAME_RULE =
  'a username is NFKC text without control, invisible or non-ASCII space characters, no leading, trailing or double spaces, letters of one of Latin/Greek/Cyrillic, at most 100 characters (254 with @)';

/** The command ran and failed (no such user, already exists, …): the message alone (exit 1). */
class AdminError extends Error {}

const DEFAULT_RETIRE_AFTER = 86400;

export interface SignedTokenLifetimes {
  /** The longest access-token TTL: server-wide `accessTokenTTL` or a resource's own. */
  accessToken: number;
  idToken: number;
  longest: number;
}

/**
 * How long a JWT the AS signs stays valid, from the same configuration the server reads
 * (AS_CONFIG_FILE and the environment). A retired signing key must stay published that long.
 */
export function signedTokenLifetimes(env: NodeJS.ProcessEnv): SignedTokenLifetimes {
  const { config, problems } = loadConfig(env);
  if (problems.length) {
    throw new ConfigError(problems, 'auth-server (cannot tell how long issued tokens stay valid; see --print-config)');
  }
  const as = config.authorizationServer;
  const accessToken = longestAccessTokenTtl(as ?? {});
  return { accessToken, idToken: ID_TOKEN_TTL, longest: Math.max(accessToken, ID_TOKEN_TTL) };
}

async function withStore<T>(config: StorageConfig, env: NodeJS.ProcessEnv, io: AdminIo, fn: (store: Store) => Promise<T>): Promise<T> {
  // with REDIS_URL, a grant revoked here reaches the resource servers as one revoked by the AS
  const redisUrl = env.REDIS_URL?.trim();
  const warn = (message: string, fields?: Record<string, unknown>) =>
    io.err(terminalText`warning: ${message} ${JSON.stringify(fields ?? {})}`);
  const signal = redisUrl
    ? await connectRevocationSignal(redisUrl, env.REDIS_PREFIX?.trim() || undefined, signedTokenLifetimes(env).accessToken, {
        info: () => {},
        warn,
        error: warn,
      })
    : undefined;
  const store = await openStore(config, signal ? { onGrantRevoked: signal.publish } : {});
  signal?.useStore(store);
  try {
    return await fn(store);
  } finally {
    await store.close();
    await signal?.close();
  }
}

async function newPassword(io: AdminIo): Promise<string> {
  const password = await io.readPassword();
  if (!password) {
    throw new AdminError('no password given: type it at the prompt, pipe it as the first line of stdin, or set AS_ADMIN_PASSWORD');
  }
  if (password.length < 8) throw new AdminError('the password must have at least 8 characters; nothing changed');
  return password;
}

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

/** The usage text: the program's own layout. */
const usage = () => ownLayout(ADMIN_USAGE);

/**
 * An error as one line of data (a message quoting a stored name with LF or ESC cannot add or
 * rewrite a line); only an invalid configuration's problems get a line each, each still data.
 */
function printError(io: AdminIo, err: unknown): void {
  if (err instanceof ConfigError) {
    io.err(terminalText`error: ${err.message.split('\n', 1)[0]}`);
    for (const problem of err.problems) io.err(terminalText`  - ${problem}`);
    return;
  }
  io.err(terminalText`error: ${err instanceof Error ? err.message : String(err)}`);
}

/** One `user list` row: tab-separated columns, each a value made visible (no TAB or LF of its own). */
function userRow(columns: readonly unknown[]): TerminalText {
  return joinText(
    columns.map((c) => terminalText`${c}`),
    '\t',
  );
}

const COMMANDS = new Set([
  'user add',
  'user set-password',
  'user reset-password',
  'user disable',
  'user enable',
  'user list',
  'user link',
  'user unlink',
  'user grant-admin',
  'user revoke-admin',
  'clients list',
  'cimd list',
  'cimd approve',
  'cimd deny',
  'grants list',
  'grants revoke',
  'keys rotate',
  'keys list',
  'cookie-keys rotate',
  'cleanup',
]);

/** The admin tool as the audit log names it: the operator at the terminal has no account of their own here. */
export const CLI_ACTOR: Actor = { sub: 'admin-tool', via: 'cli' };

/** A refusal of the admin service as the tool's own: bad input exits 2, the rest 1. */
function asToolError(err: unknown): unknown {
  if (!(err instanceof AdminServiceError)) return err;
  return err.error === 'invalid_request' ? new RefusedError(err.message) : new AdminError(err.message);
}

/** Runs one admin command; returns the process exit code (0 done, 1 failed, 2 refused as given). */
export async function runAdmin(argv: string[], env: NodeJS.ProcessEnv, io: AdminIo): Promise<number> {
  // A client_id may start with "-" (DCR ids are random base64url): take it before option parsing.
  const grantsRevoke = argv[0] === 'grants' && argv[1] === 'revoke' && argv.length >= 4;
  const rawClientId = grantsRevoke ? argv[3] : undefined;
  let parsed: ReturnType<
    typeof parseArgs<{
      args: string[];
      allowPositionals: true;
      options: {
        'display-name': { type: 'string' };
        'retire-after': { type: 'string' };
        adopt: { type: 'boolean' };
        help: { type: 'boolean'; short: 'h' };
      };
    }>
  >;
  try {
    parsed = parseArgs({
      args: grantsRevoke ? [...argv.slice(0, 3), ...argv.slice(4)] : argv,
      allowPositionals: true,
      options: {
        'display-name': { type: 'string' },
        'retire-after': { type: 'string' },
        adopt: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    printError(io, err);
    io.err(usage());
    return 2;
  }
  const [group, action, name] = parsed.positionals;
  const clientArg = rawClientId ?? parsed.positionals[3];
  if (parsed.values.help) {
    io.out(usage());
    return 0;
  }
  if (!group) {
    io.err(terminalText`error: no command given`);
    io.err(usage());
    return 2;
  }
  const key = `${group} ${action ?? ''}`.trim();
  // Before the store is opened: a typo must not create an empty SQLite file.
  if (!COMMANDS.has(key)) {
    io.err(terminalText`error: unknown command "${key}"`);
    io.err(usage());
    return 2;
  }
  try {
    const config = adminStorage(env);
    return await withStore(config, env, io, async (store) => {
      // One service with the console's JSON API: the two never disagree (issue 44).
      const service: AdminService = createAdminService({ store });
      const requireName = () => {
        if (!name) throw new UsageError(`${key} needs a username`);
        return name;
      };
      const findUser = async () => {
        const username = requireName();
        const account = await store.accounts.findByUsername(username);
        if (!account) throw new AdminError(`no such user "${username}" (\`${ADMIN_COMMAND} user list\` lists them)`);
        return account;
      };
      switch (key) {
        case 'user add': {
          const username = requireName();
          // Before the password prompt; the name itself is not echoed (it may hold control characters).
          const problem = usernameProblem(username);
          if (problem) throw new RefusedError(`username refused (${problem}): ${USERNAME_RULE}`);
          if (await store.accounts.findByUsername(username)) throw new AdminError(`user "${username}" already exists; nothing changed`);
          // Stored as every page and client will show it: the one display rule (displaySafeText).
          const givenName = parsed.values['display-name'];
          const displayName = givenName === undefined ? undefined : displaySafeText(givenName);
          if (givenName !== undefined && displayName === undefined) throw new RefusedError('display name refused: nothing visible is left');
          const account = await service.createUser(CLI_ACTOR, { username, password: await newPassword(io), displayName });
          io.out(terminalText`created user ${account.username} (sub ${account.id})`);
          return 0;
        }
        case 'user reset-password':
        case 'user set-password': {
          const account = await findUser();
          // The demo seed is the operator's own (its public password is what is being replaced).
          const own = operatorOwns(account) || account.source === 'demo';
          if (!own && !parsed.values.adopt)
            throw new RefusedError(
              `"${account.username}" was made by ${describeSource(account.source)}, not by the operator: a password set here would let ` +
                'its creator and whoever gets the password into one account. Nothing changed. To take the account over, run ' +
                `\`${ADMIN_COMMAND} user set-password ${account.username} --adopt\` (it unlinks its upstream identities and revokes its grants)`,
            );
          const passwordHash = await hashPassword(await newPassword(io));
          if (own) {
            await store.accounts.update(account.id, { passwordHash, source: 'operator' });
            io.out(terminalText`password changed for ${account.username}`);
            return 0;
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
          return 0;
        }
        case 'user disable':
        case 'user enable': {
          const account = await findUser();
          // Disabling goes through the store's revocation path (the service): resource servers following
          // the Redis signal refuse its access tokens now, re-enabling later revives no refresh token,
          // and the token vault's connections go too.
          const done = await service.setUserDisabled(CLI_ACTOR, account.id, action === 'disable');
          if (action === 'enable') {
            io.out(terminalText`${account.username} enabled (tokens issued before it was disabled stay revoked)`);
            return 0;
          }
          io.out(
            terminalText`${account.username} disabled; revoked ${done.revokedGrants.length} grant(s) and their tokens; deleted ${String(done.deletedConnections)} third-party connection(s)`,
          );
          return 0;
        }
        case 'user link':
        case 'user unlink': {
          const account = await findUser();
          const [, , , issuer, subject] = parsed.positionals;
          if (!issuer || !subject || /\s/.test(issuer) || /\s/.test(subject))
            throw new UsageError(`${key} needs a username, an issuer and a subject`);
          if (action === 'link') {
            await service.linkIdentity(CLI_ACTOR, account.id, issuer, subject);
            io.out(terminalText`${account.username} can sign in as ${subject} at ${issuer}`);
          } else {
            await service.unlinkIdentity(CLI_ACTOR, account.id, issuer, subject);
            io.out(terminalText`unlinked ${subject} at ${issuer} from ${account.username}`);
          }
          return 0;
        }
        case 'user list': {
          for (const a of await service.listUsers()) {
            // Linked identities (upstream sign-in, ID-JAG just-in-time accounts) as "<issuer> <sub>".
            const linked = a.linkedIdentities.join(', ');
            const status = `${a.disabled ? 'disabled' : 'active'}${a.admin ? '+admin' : ''}`;
            io.out(userRow([a.username, a.id, status, a.displayName ?? '', ...(linked ? [linked] : [])]));
          }
          return 0;
        }
        case 'user grant-admin':
        case 'user revoke-admin': {
          const account = await findUser();
          await service.setUserAdmin(CLI_ACTOR, account.id, action === 'grant-admin');
          io.out(
            action === 'grant-admin'
              ? terminalText`${account.username} is an admin of the operator console`
              : terminalText`${account.username} is no longer an admin of the operator console`,
          );
          return 0;
        }
        case 'clients list': {
          for (const c of await service.listClients()) {
            const status = [c.disabled ? 'disabled' : 'active', ...(c.approval ? [c.approval] : [])].join(',');
            io.out(userRow([c.origin, c.clientId, status, c.redirectUris.join(' ')]));
          }
          return 0;
        }
        case 'cimd list': {
          const filter = parsed.positionals[2];
          if (filter !== undefined && !['pending', 'approved', 'denied'].includes(filter))
            throw new UsageError('cimd list takes pending, approved or denied');
          for (const c of await service.listCimdClients(filter as 'pending' | 'approved' | 'denied' | undefined)) {
            io.out(userRow([c.status, c.clientId, c.host, new Date(c.firstSeen * 1000).toISOString()]));
          }
          return 0;
        }
        case 'cimd approve':
        case 'cimd deny': {
          const clientId = parsed.positionals[2];
          if (!clientId) throw new UsageError(`${key} needs a client_id URL`);
          const decided = await service.decideCimdClient(CLI_ACTOR, clientId, action === 'approve' ? 'approved' : 'denied');
          io.out(terminalText`${decided.clientId} ${decided.status}`);
          return 0;
        }
        case 'grants list': {
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
          return 0;
        }
        case 'grants revoke': {
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
          return 0;
        }
        case 'keys rotate': {
          const text = parsed.values['retire-after'];
          const retireAfter = text === undefined ? undefined : /^\d+$/.test(text.trim()) ? Number(text) : NaN;
          if (retireAfter !== undefined && !Number.isSafeInteger(retireAfter))
            throw new RefusedError('--retire-after must be a whole number of seconds');
          const ttl = signedTokenLifetimes(env);
          // Resource servers verify a token with the key it names: dropping that key from the
          // JWKS before the token expires makes them refuse a token that is still valid.
          if (retireAfter !== undefined && retireAfter < ttl.longest) {
            throw new RefusedError(
              `--retire-after ${retireAfter} is too short: the previous key must stay published for at least ${ttl.longest} s, ` +
                `the longest lifetime of a token it signed (access tokens ${ttl.accessToken} s, ID tokens ${ttl.idToken} s); ` +
                'otherwise resource servers refuse tokens that have not expired yet',
            );
          }
          const rotating = createAdminService({ store, longestTokenLifetime: ttl.longest });
          const keys = await rotating.rotateSigningKeys(CLI_ACTOR, retireAfter ?? Math.max(DEFAULT_RETIRE_AFTER, ttl.longest));
          for (const k of keys) io.out(userRow([k.status, k.kid]));
          io.out(terminalText`restart the authorization server instances to sign with the new current key`);
          return 0;
        }
        case 'keys list': {
          for (const k of await service.listSigningKeys()) io.out(userRow([k.status, k.kid, k.alg]));
          return 0;
        }
        case 'cookie-keys rotate': {
          // Key material is never printed: only what changed.
          const before = (await service.cookieKeys()).count;
          const after = (await service.rotateCookieKeys(CLI_ACTOR)).count;
          const dropped = Math.max(0, before + 1 - after);
          io.out(
            terminalText`added a new cookie key; ${after} kept: the new one signs, ${after - 1} older still verify${dropped ? `, ${dropped} oldest dropped` : ''}`,
          );
          io.out(terminalText`restart the authorization server instances to sign cookies with the new key`);
          return 0;
        }
        case 'cleanup': {
          io.out(terminalText`deleted ${await store.cleanup()} expired rows`);
          return 0;
        }
        default:
          throw new UsageError(`unknown command "${key}"`);
      }
    });
  } catch (caught) {
    const err = asToolError(caught);
    if (err instanceof UsageError) {
      printError(io, err);
      io.err(usage());
      return 2;
    }
    if (err instanceof RefusedError) {
      printError(io, err);
      return 2;
    }
    printError(io, err);
    return 1;
  }
}
