/**
 * Operator commands on the AS store (same DATA_DIR / DATABASE_URL as the server):
 * users, grants, signing and cookie keys. Passwords are read from stdin or AS_ADMIN_PASSWORD, never argv.
 * This file parses the command line and dispatches; each command group has its own module.
 */
import { parseArgs } from 'node:util';
import { AdminServiceError, createAdminService, openStore, type StorageConfig, type Store } from '@mcp-auth-kit/authorization-server';
import { ConfigError, ownLayout, terminalText } from '@mcp-auth-kit/protocol';
import { GRANT_COMMANDS } from './admin-grants.js';
import { CLIENT_COMMANDS } from './admin-clients.js';
import {
  ADMIN_COMMAND,
  type AdminCommand,
  type AdminContext,
  AdminError,
  type AdminIo,
  type AdminOptionValues,
  RefusedError,
  UsageError,
} from './admin-command.js';
import { adminStorage, signedTokenLifetimes } from './admin-config.js';
import { KEY_COMMANDS } from './admin-keys.js';
import { USER_COMMANDS } from './admin-users.js';
import { connectRevocationSignal } from './revocation-signal.js';

export { ADMIN_COMMAND, CLI_ACTOR, type AdminIo } from './admin-command.js';
export { adminStorage, signedTokenLifetimes, type SignedTokenLifetimes } from './admin-config.js';

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

/** Every command, by `<group> <action>`. */
const COMMANDS: Readonly<Record<string, AdminCommand>> = {
  ...USER_COMMANDS,
  ...CLIENT_COMMANDS,
  ...GRANT_COMMANDS,
  ...KEY_COMMANDS,
  cleanup: async ({ io, store }) => {
    io.out(terminalText`deleted ${await store.cleanup()} expired rows`);
  },
};

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

/** A refusal of the admin service as the tool's own: bad input exits 2, the rest 1. */
function asToolError(err: unknown): unknown {
  if (!(err instanceof AdminServiceError)) return err;
  return err.error === 'invalid_request' ? new RefusedError(err.message) : new AdminError(err.message);
}

interface CommandLine {
  positionals: string[];
  values: AdminOptionValues & { help?: boolean };
  clientArg: string | undefined;
}

/** The words and options of a command line; throws what parseArgs refuses. */
function parseCommandLine(argv: string[]): CommandLine {
  // A client_id may start with "-" (DCR ids are random base64url): take it before option parsing.
  const grantsRevoke = argv[0] === 'grants' && argv[1] === 'revoke' && argv.length >= 4;
  const rawClientId = grantsRevoke ? argv[3] : undefined;
  const { positionals, values } = parseArgs({
    args: grantsRevoke ? [...argv.slice(0, 3), ...argv.slice(4)] : argv,
    allowPositionals: true,
    options: {
      'display-name': { type: 'string' },
      'retire-after': { type: 'string' },
      adopt: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  return { positionals, values, clientArg: rawClientId ?? positionals[3] };
}

/** The context a command runs in, over an open store. */
function commandContext(line: CommandLine, key: string, env: NodeJS.ProcessEnv, io: AdminIo, store: Store): AdminContext {
  const [, action, name] = line.positionals;
  const requireName = () => {
    if (!name) throw new UsageError(`${key} needs a username`);
    return name;
  };
  return {
    key,
    action,
    positionals: line.positionals,
    values: line.values,
    clientArg: line.clientArg,
    env,
    io,
    store,
    service: createAdminService({ store }),
    requireName,
    findUser: async () => {
      const username = requireName();
      const account = await store.accounts.findByUsername(username);
      if (!account) throw new AdminError(`no such user "${username}" (\`${ADMIN_COMMAND} user list\` lists them)`);
      return account;
    },
  };
}

/** Runs one admin command; returns the process exit code (0 done, 1 failed, 2 refused as given). */
export async function runAdmin(argv: string[], env: NodeJS.ProcessEnv, io: AdminIo): Promise<number> {
  let line: CommandLine;
  try {
    line = parseCommandLine(argv);
  } catch (err) {
    printError(io, err);
    io.err(usage());
    return 2;
  }
  const [group, action] = line.positionals;
  if (line.values.help) {
    io.out(usage());
    return 0;
  }
  if (!group) {
    io.err(terminalText`error: no command given`);
    io.err(usage());
    return 2;
  }
  const key = `${group} ${action ?? ''}`.trim();
  const command = Object.hasOwn(COMMANDS, key) ? COMMANDS[key] : undefined;
  // Before the store is opened: a typo must not create an empty SQLite file.
  if (!command) {
    io.err(terminalText`error: unknown command "${key}"`);
    io.err(usage());
    return 2;
  }
  try {
    await withStore(adminStorage(env), env, io, (store) => command(commandContext(line, key, env, io, store)));
    return 0;
  } catch (caught) {
    const err = asToolError(caught);
    printError(io, err);
    if (err instanceof UsageError) {
      io.err(usage());
      return 2;
    }
    return err instanceof RefusedError ? 2 : 1;
  }
}
