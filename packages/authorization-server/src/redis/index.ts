// @mcp-auth-kit/authorization-server/redis: publishes revoked grants to resource servers over
// Redis (optional peer dependency `redis`; this entry imports no client, it takes yours).
export {
  createRedisRevocationChannel,
  createRedisRevocationPublisher,
  createRedisRevocationSignal,
  revocationRetentionSeconds,
  type RedisCommandConnection,
  type RedisRevocationPublisherOptions,
  type RedisRevocationSignalOptions,
} from './revocation-publisher.js';
export type { RevocationChannel, RevocationOutbox } from '../tokens/revocation-outbox.js';
