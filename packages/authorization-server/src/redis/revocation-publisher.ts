import { DEFAULT_REVOCATION_PREFIX, isGrantId, revocationChannel, revokedGrantKey } from '@mcp-auth-kit/protocol';
import { DEFAULT_ACCESS_TOKEN_TTL } from '../provider.js';

/** A connection that runs commands: node-redis's `sendCommand(['SET', …])` fits it as it is. */
export interface RedisCommandConnection {
  sendCommand(args: string[]): Promise<unknown>;
}

export interface RedisRevocationPublisherOptions {
  /** A connected node-redis client (`redis` 5 or 6), or anything with `sendCommand`. */
  client: RedisCommandConnection;
  /** Key and channel prefix; the resource servers' revocation list uses the same (default `mcp-auth-kit:`). */
  prefix?: string;
  /**
   * The longest access-token lifetime this server issues, in seconds (default
   * `DEFAULT_ACCESS_TOKEN_TTL`): how long a revoked grant must stay known.
   */
  accessTokenTtlSeconds?: number;
}

/**
 * Resource servers accept `exp` up to their clock tolerance late (at most 300 s): the mark
 * outlives the tokens by that much.
 */
const CLOCK_TOLERANCE_MARGIN_SECONDS = 300;

/**
 * The authorization server's side of the revocation signal, for `openStore(…, { onGrantRevoked })`:
 * a key per revoked grant, kept for the longest access-token lifetime (a resource-server replica
 * started later reads it), then the grant id on the channel (running replicas refuse its tokens
 * at once). Key first: a replica that reads the keys after hearing nothing still finds it.
 */
export function createRedisRevocationPublisher(options: RedisRevocationPublisherOptions): (grantId: string) => Promise<void> {
  const prefix = options.prefix ?? DEFAULT_REVOCATION_PREFIX;
  const channel = revocationChannel(prefix);
  const ttl = Math.ceil(options.accessTokenTtlSeconds ?? DEFAULT_ACCESS_TOKEN_TTL) + CLOCK_TOLERANCE_MARGIN_SECONDS;
  return async (grantId) => {
    if (!isGrantId(grantId)) return;
    await options.client.sendCommand(['SET', revokedGrantKey(grantId, prefix), '1', 'EX', String(ttl)]);
    await options.client.sendCommand(['PUBLISH', channel, grantId]);
  };
}
