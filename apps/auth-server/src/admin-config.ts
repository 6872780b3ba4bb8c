/**
 * What the admin tool reads of the server's configuration: which store to open and how long the
 * tokens the AS signs stay valid, both from the same environment and AS_CONFIG_FILE as the server.
 */
import { ID_TOKEN_TTL, storageConfigFromEnv, type StorageConfig } from '@mcp-auth-kit/authorization-server';
import { ConfigError } from '@mcp-auth-kit/protocol';
import { loadConfig } from './config.js';
import { longestAccessTokenTtl } from './revocation-signal.js';

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
