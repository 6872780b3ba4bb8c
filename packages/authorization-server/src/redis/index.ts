// @mcp-auth-kit/authorization-server/redis: publishes revoked grants to resource servers over
// Redis (optional peer dependency `redis`; this entry imports no client, it takes yours).
export {
  createRedisRevocationPublisher,
  type RedisCommandConnection,
  type RedisRevocationPublisherOptions,
} from './revocation-publisher.js';
