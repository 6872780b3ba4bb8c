// @mcp-auth-kit/resource-server/redis: the resource server's shared state on Redis (optional
// peer dependency `redis`; this entry imports no client, it takes yours).
export { RedisDpopReplayStore, type RedisDpopReplayStoreOptions } from './replay-store.js';
export {
  createRedisRevocationList,
  DEFAULT_REVOCATION_RESYNC_MS,
  DEFAULT_REVOCATION_RETAIN_SECONDS,
  type RedisRevocationList,
  type RedisRevocationListOptions,
} from './revocation-list.js';
export type { RedisCommandConnection, RedisSubscriberConnection } from './connection.js';
