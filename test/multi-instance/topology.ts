/**
 * The scale-out topology, one description for both places that run it: docker-compose.yml (checked
 * by test/compose) and the multi-instance test (which starts exactly these, on loopback).
 */
export const TOPOLOGY = {
  /** Authorization servers on one PostgreSQL schema, publishing revoked grants to Redis. */
  authServers: ['auth-server-1', 'auth-server-2'],
  /** Demo MCP server replicas sharing notes, DPoP replay and revocations through Redis. */
  mcpReplicas: ['demo-mcp-server-1', 'demo-mcp-server-2'],
  postgres: 'postgres',
  redis: 'redis',
  /** One round-robin balancer (scripts/round-robin-proxy.mjs) in front of each pair. */
  proxy: 'proxy',
  /** Settings every authorization server must share (same values on each). */
  sharedAuthServerEnv: ['AS_ISSUER', 'MCP_RESOURCE', 'DATABASE_URL', 'DATABASE_SCHEMA', 'REDIS_URL', 'REDIS_PREFIX'],
  /** Settings every MCP replica must share, and with the authorization servers where named alike. */
  sharedMcpEnv: ['AS_ISSUER', 'MCP_RESOURCE', 'REDIS_URL', 'REDIS_PREFIX'],
} as const;
