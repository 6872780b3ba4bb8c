import { DEFAULT_REVOCATION_PREFIX } from '@mcp-auth-kit/protocol';
import type { DpopReplayStore } from '../types.js';
import type { RedisCommandConnection } from './connection.js';

export interface RedisDpopReplayStoreOptions {
  /** A connected node-redis client (or anything with `sendCommand`). */
  client: RedisCommandConnection;
  /** Key prefix, e.g. one per deployment sharing the Redis (default `mcp-auth-kit:`). */
  prefix?: string;
}

/**
 * {@link DpopReplayStore} shared by every replica (RFC 9449 §11.1): `SET <key> 1 NX PXAT
 * <expiresAt>`, one atomic command, so of two replicas seeing one proof at the same moment
 * exactly one records it. Redis expires each key when its proof could no longer pass the `iat`
 * window, so the store needs no sweeping. A Redis failure refuses the request (500): a proof is
 * never accepted unchecked.
 */
export class RedisDpopReplayStore implements DpopReplayStore {
  readonly #client: RedisCommandConnection;
  readonly #prefix: string;
  constructor(options: RedisDpopReplayStoreOptions) {
    this.#client = options.client;
    this.#prefix = `${options.prefix ?? DEFAULT_REVOCATION_PREFIX}dpop-jti:`;
  }

  async add(key: string, expiresAt: number): Promise<boolean> {
    const at = Math.max(Math.ceil(expiresAt), 1);
    const reply = await this.#client.sendCommand(['SET', `${this.#prefix}${key}`, '1', 'NX', 'PXAT', String(at)]);
    return reply === 'OK';
  }
}
