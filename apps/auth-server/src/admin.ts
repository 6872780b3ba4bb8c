/**
 * Operator commands on the AS store (same DATA_DIR / DATABASE_URL as the server):
 * users, grants, signing and cookie keys. Passwords are read from stdin or AS_ADMIN_PASSWORD, never argv.
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import {
  DEFAULT_ACCESS_TOKEN_TTL,
  ID_TOKEN_TTL,
  hashPassword,
  listAccountGrants,
  openStore,
  revokeRememberedGrant,
  storageConfigFromEnv,
  type StorageConfig,
  type Store,
} from '@mcp-auth-kit/authorization-server';
import { loadConfig } from './config.js';
import { connectRevocationSignal } from './revocation-signal.js';

export interface AdminIo {
  out(line: string): void;
  err(line: string): void;
  /** Reads the password (first line of stdin, or AS_ADMIN_PASSWORD). */
  readPassword(): Promise<string>;
}

export const ADMIN_USAGE = `usage: mcp-auth-server-admin <command>
  user add <username> [--display-name <name>]   create a local account (password from stdin or AS_ADMIN_PASSWORD)
  user set-password <username>                  reset the password (stdin or AS_ADMIN_PASSWORD); alias: user reset-password
  user disable <username> | user enable <username>
  user list                                     username, sub, status, display name, linked identities (<issuer> <sub>)
  user link <username> <issuer> <sub>           let an upstream OpenID Connect identity sign in as this user
  user unlink <username> <issuer> <sub>
  grants list <username>                        the clients the user approved, with resources and scopes
  grants revoke <username> <client_id>          revoke that approval and every token issued under it (asked again next time)
  keys rotate [--retire-after <seconds>]         publish-before-use rotation; the old key stays published for
                                                 86400 s by default, never less than the longest token lifetime
  keys list
  cookie-keys rotate                             a new cookie signing key; the older ones still verify (3 kept)
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
      throw new Error(
        `cannot tell which store to open: the configuration is invalid (see --print-config):\n  - ${problems.join('\n  - ')}`,
      );
    }
    return config.storage ?? storageConfigFromEnv({ DATA_DIR: config.dataDir });
  }
  return storageConfigFromEnv(env);
}

class UsageError extends Error {}

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
    throw new Error(
      `cannot tell how long issued tokens stay valid: the configuration is invalid (see --print-config):\n  - ${problems.join('\n  - ')}`,
    );
  }
  const as = config.authorizationServer;
  const accessToken = Math.max(as?.accessTokenTTL ?? DEFAULT_ACCESS_TOKEN_TTL, ...(as?.resources ?? []).map((r) => r.accessTokenTTL ?? 0));
  return { accessToken, idToken: ID_TOKEN_TTL, longest: Math.max(accessToken, ID_TOKEN_TTL) };
}

async function withStore<T>(config: StorageConfig, env: NodeJS.ProcessEnv, io: AdminIo, fn: (store: Store) => Promise<T>): Promise<T> {
  // with REDIS_URL, a grant revoked here reaches the resource servers as one revoked by the AS
  const redisUrl = env.REDIS_URL?.trim();
  const warn = (message: string, fields?: Record<string, unknown>) => io.err(`warning: ${message} ${JSON.stringify(fields ?? {})}`);
  const signal = redisUrl
    ? await connectRevocationSignal(redisUrl, env.REDIS_PREFIX?.trim() || undefined, signedTokenLifetimes(env).accessToken, {
        info: () => {},
        warn,
        error: warn,
      })
    : undefined;
  const store = await openStore(config, signal ? { onGrantRevoked: signal.publish } : {});
  try {
    return await fn(store);
  } finally {
    await store.close();
    await signal?.close();
  }
}

async function newPassword(io: AdminIo): Promise<string> {
  const password = await io.readPassword();
  if (password.length < 8) throw new UsageError('the password must have at least 8 characters');
  return password;
}

/** Runs one admin command; returns the process exit code. */
export async function runAdmin(argv: string[], env: NodeJS.ProcessEnv, io: AdminIo): Promise<number> {
  // A client_id may start with "-" (DCR ids are random base64url): take it before option parsing.
  const grantsRevoke = argv[0] === 'grants' && argv[1] === 'revoke' && argv.length >= 4;
  const rawClientId = grantsRevoke ? argv[3] : undefined;
  let parsed: ReturnType<
    typeof parseArgs<{
      args: string[];
      allowPositionals: true;
      options: { 'display-name': { type: 'string' }; 'retire-after': { type: 'string' }; help: { type: 'boolean'; short: 'h' } };
    }>
  >;
  try {
    parsed = parseArgs({
      args: grantsRevoke ? [...argv.slice(0, 3), ...argv.slice(4)] : argv,
      allowPositionals: true,
      options: { 'display-name': { type: 'string' }, 'retire-after': { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    });
  } catch (err) {
    io.err((err as Error).message);
    io.err(ADMIN_USAGE);
    return 2;
  }
  const [group, action, name] = parsed.positionals;
  const clientArg = rawClientId ?? parsed.positionals[3];
  if (parsed.values.help || !group) {
    io.out(ADMIN_USAGE);
    return parsed.values.help ? 0 : 2;
  }
  try {
    const config = adminStorage(env);
    return await withStore(config, env, io, async (store) => {
      const key = `${group} ${action ?? ''}`.trim();
      const requireName = () => {
        if (!name) throw new UsageError(`${key} needs a username`);
        return name;
      };
      const findUser = async () => {
        const username = requireName();
        const account = await store.accounts.findByUsername(username);
        if (!account) throw new UsageError(`no user "${username}"`);
        return account;
      };
      switch (key) {
        case 'user add': {
          const username = requireName();
          if (await store.accounts.findByUsername(username)) throw new UsageError(`user "${username}" already exists`);
          const account = await store.accounts.create({
            id: randomUUID(),
            username,
            passwordHash: await hashPassword(await newPassword(io)),
            displayName: parsed.values['display-name'],
            disabled: false,
          });
          io.out(`created user ${account.username} (sub ${account.id})`);
          return 0;
        }
        case 'user reset-password':
        case 'user set-password': {
          const account = await findUser();
          await store.accounts.update(account.id, { passwordHash: await hashPassword(await newPassword(io)) });
          io.out(`password changed for ${account.username}`);
          return 0;
        }
        case 'user disable':
        case 'user enable': {
          const account = await findUser();
          await store.accounts.update(account.id, { disabled: action === 'disable' });
          io.out(`${account.username} ${action === 'disable' ? 'disabled' : 'enabled'}`);
          return 0;
        }
        case 'user link':
        case 'user unlink': {
          const account = await findUser();
          const [, , , issuer, subject] = parsed.positionals;
          if (!issuer || !subject || /\s/.test(issuer) || /\s/.test(subject))
            throw new UsageError(`${key} needs a username, an issuer and a subject`);
          const identity = `${issuer} ${subject}`;
          const current = account.upstreamIdentities ?? [];
          if (action === 'link') {
            const owner = await store.accounts.findByUpstreamIdentity(issuer, subject);
            if (owner && owner.id !== account.id) throw new UsageError(`that identity is already linked to "${owner.username}"`);
            if (!current.includes(identity)) await store.accounts.update(account.id, { upstreamIdentities: [...current, identity] });
            io.out(`${account.username} can sign in as ${subject} at ${issuer}`);
          } else {
            await store.accounts.update(account.id, { upstreamIdentities: current.filter((i) => i !== identity) });
            io.out(`unlinked ${subject} at ${issuer} from ${account.username}`);
          }
          return 0;
        }
        case 'user list': {
          for (const a of await store.accounts.list()) {
            // Linked identities (upstream sign-in, ID-JAG just-in-time accounts) as "<issuer> <sub>".
            const linked = (a.upstreamIdentities ?? []).join(', ');
            io.out(`${a.username}\t${a.id}\t${a.disabled ? 'disabled' : 'active'}\t${a.displayName ?? ''}${linked ? `\t${linked}` : ''}`);
          }
          return 0;
        }
        case 'grants list': {
          const account = await findUser();
          const grants = await listAccountGrants(store, account.id);
          if (!grants.length) io.out(`${account.username} has approved no client`);
          for (const g of grants) {
            const scopes = Object.entries(g.resources)
              .map(([resource, list]) => `${resource} [${list.join(' ')}]`)
              .join(', ');
            const until = g.expiresAt ? new Date(g.expiresAt * 1000).toISOString() : 'no expiry';
            io.out(`${g.clientId}\t${scopes || '(no resource)'}\tuntil ${until}`);
          }
          return 0;
        }
        case 'grants revoke': {
          const account = await findUser();
          if (!clientArg) throw new UsageError('grants revoke needs a username and a client_id');
          if (!(await revokeRememberedGrant(store, account.id, clientArg)))
            throw new UsageError(`${account.username} has no grant for client "${clientArg}"`);
          io.out(`revoked the grant of ${account.username} for ${clientArg} (its tokens no longer work)`);
          return 0;
        }
        case 'keys rotate': {
          const text = parsed.values['retire-after'];
          const retireAfter = text === undefined ? undefined : /^\d+$/.test(text.trim()) ? Number(text) : NaN;
          if (retireAfter !== undefined && !Number.isSafeInteger(retireAfter))
            throw new UsageError('--retire-after must be a whole number of seconds');
          const ttl = signedTokenLifetimes(env);
          // Resource servers verify a token with the key it names: dropping that key from the
          // JWKS before the token expires makes them refuse a token that is still valid.
          if (retireAfter !== undefined && retireAfter < ttl.longest) {
            throw new UsageError(
              `--retire-after ${retireAfter} is too short: the previous key must stay published for at least ${ttl.longest} s, ` +
                `the longest lifetime of a token it signed (access tokens ${ttl.accessToken} s, ID tokens ${ttl.idToken} s); ` +
                'otherwise resource servers refuse tokens that have not expired yet',
            );
          }
          const keys = await store.keys.rotateSigningKeys(retireAfter ?? Math.max(DEFAULT_RETIRE_AFTER, ttl.longest));
          for (const k of keys) io.out(`${k.status}\t${k.jwk.kid}`);
          io.out('restart the authorization server instances to sign with the new current key');
          return 0;
        }
        case 'keys list': {
          for (const k of await store.keys.signingKeys()) io.out(`${k.status}\t${k.jwk.kid}\t${k.jwk.alg}`);
          return 0;
        }
        case 'cookie-keys rotate': {
          // Key material is never printed: only what changed.
          const before = (await store.keys.cookieKeys()).length;
          const after = await store.keys.rotateCookieKeys();
          const dropped = Math.max(0, before + 1 - after.length);
          io.out(
            `added a new cookie key; ${after.length} kept: the new one signs, ${after.length - 1} older still verify${dropped ? `, ${dropped} oldest dropped` : ''}`,
          );
          io.out('restart the authorization server instances to sign cookies with the new key');
          return 0;
        }
        case 'cleanup': {
          io.out(`deleted ${await store.cleanup()} expired rows`);
          return 0;
        }
        default:
          throw new UsageError(`unknown command "${key}"`);
      }
    });
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(err.message);
      io.err(ADMIN_USAGE);
      return 2;
    }
    io.err(`error: ${(err as Error).message}`);
    return 1;
  }
}
