#!/usr/bin/env node
// Runnable demo MCP server. Environment (runtime contract): MCP_PORT (3000), MCP_RESOURCE
// (http://localhost:<MCP_PORT>/mcp), AS_ISSUER (http://localhost:9000); optional MCP_HOST
// (comma-separated listen addresses, default loopback 127.0.0.1 and ::1) and
// MCP_ALLOWED_ORIGINS (comma-separated browser origins, default the resource's origin),
// MCP_DPOP_REQUIRED=1 (accept only DPoP-bound tokens, RFC 9449; default: DPoP and Bearer),
// REDIS_URL (several replicas: notes, DPoP replay and revoked grants in Redis; default in
// memory) with REDIS_PREFIX (key prefix, default mcp-auth-kit:, the same as the AS's);
// MCP_STATE_SECRET (≥ 32 characters, the same on every replica: key of the list_notes cursors).
import { ConfigError } from '@mcp-auth-kit/protocol';
import type { ResourceServerLogger } from '@mcp-auth-kit/resource-server';
import { DEMO_DEFAULTS, PROCESS_DEFAULTS } from './defaults.js';
import { startDemoServer } from './server.js';

/** Refusal reasons to stderr, one bounded line each (the middleware never passes tokens). */
const stderrLogger: ResourceServerLogger = {
  info: (message, details) => writeLog('info', message, details),
  warn: (message, details) => writeLog('warn', message, details),
};

function writeLog(level: string, message: string, details?: Record<string, unknown>): void {
  const line = `${level}: ${message}${details ? ` ${JSON.stringify(details)}` : ''}`;
  process.stderr.write(`${line.replace(/[\r\n]+/g, ' ').slice(0, 500)}\n`);
}

function list(value: string | undefined): string[] | undefined {
  const items = value
    ?.split(',')
    .map((item) => item.trim())
    .filter((item) => item.length > 0);
  return items && items.length > 0 ? items : undefined;
}

// Each records its problem and returns the default, so one ConfigError lists every bad variable.
function port(problems: string[], value: string | undefined): number {
  if (value === undefined || value === '') return DEMO_DEFAULTS.port;
  const parsed = Number(value);
  if (Number.isInteger(parsed) && parsed >= 0 && parsed <= 65535) return parsed;
  problems.push('MCP_PORT must be a port number (0-65535)');
  return DEMO_DEFAULTS.port;
}

function milliseconds(problems: string[], value: string | undefined, fallback: number): number {
  if (value === undefined || value.trim() === '') return fallback;
  const parsed = Number(value);
  if (Number.isInteger(parsed) && parsed >= 0) return parsed;
  problems.push('SHUTDOWN_TIMEOUT_MS must be a number of milliseconds');
  return fallback;
}

/**
 * The demo drive tool (issue 41): DEMO_DRIVE_API (the drive's API base URL) with this server's
 * client at the authorization server, MCP_CLIENT_ID and MCP_CLIENT_SECRET (the AS reads the same
 * two names); `npm start` sets all three when it starts the demo drive.
 */
function driveFromEnv(problems: string[], env: NodeJS.ProcessEnv): { api: string; clientId: string; clientSecret: string } | undefined {
  const api = env.DEMO_DRIVE_API?.trim();
  if (!api) return undefined;
  const clientId = env.MCP_CLIENT_ID?.trim();
  const clientSecret = env.MCP_CLIENT_SECRET?.trim();
  if (!clientId || !clientSecret) {
    problems.push("DEMO_DRIVE_API needs MCP_CLIENT_ID and MCP_CLIENT_SECRET (this server's client for the token exchange)");
    return undefined;
  }
  return { api, clientId, clientSecret };
}

async function main(): Promise<void> {
  const env = process.env;
  const hosts = list(env.MCP_HOST);
  const allowedOrigins = list(env.MCP_ALLOWED_ORIGINS);
  const problems: string[] = [];
  const listenPort = port(problems, env.MCP_PORT);
  const shutdownTimeoutMs = milliseconds(problems, env.SHUTDOWN_TIMEOUT_MS, PROCESS_DEFAULTS.shutdownTimeoutMs);
  const drive = driveFromEnv(problems, env);
  const issuer = env.AS_ISSUER || PROCESS_DEFAULTS.issuer;
  if (problems.length > 0) throw new ConfigError(problems);
  const server = await startDemoServer({
    ...(drive && { drive }),
    // spec/extensions: what our AS supports, advertised in server/discover (enterprise-managed
    // authorization only when the AS trusts an IdP: the ID_JAG_* variables it reads too).
    authExtensions: { clientCredentials: true, enterpriseManagedAuthorization: !!env.ID_JAG_ISSUER?.trim() },
    ...(env.MCP_STATE_SECRET?.trim() && { stateSecret: env.MCP_STATE_SECRET.trim() }),
    port: listenPort,
    ...(hosts && { hosts }),
    ...(env.MCP_RESOURCE && { resource: env.MCP_RESOURCE }),
    issuer,
    ...(allowedOrigins && { allowedOrigins }),
    // RFC 9449: DPoP and Bearer accepted; MCP_DPOP_REQUIRED=1 refuses Bearer tokens
    dpop: env.MCP_DPOP_REQUIRED === '1' || env.MCP_DPOP_REQUIRED === 'true' ? { required: true } : true,
    // GET /metrics (token validations, latency) unless MCP_METRICS=0.
    metrics: !['0', 'false'].includes(env.MCP_METRICS?.trim() ?? ''),
    shutdownTimeoutMs,
    logger: stderrLogger,
    ...(env.REDIS_URL?.trim() && { redisUrl: env.REDIS_URL.trim() }),
    ...(env.REDIS_PREFIX?.trim() && { redisPrefix: env.REDIS_PREFIX.trim() }),
  });
  process.stdout.write(
    `demo MCP server listening on ${server.hosts.map((h) => (h.includes(':') ? `[${h}]` : h)).join(', ')} port ${server.port}\n` +
      `  MCP endpoint (resource): ${server.resource}\n` +
      `  accepts tokens from:     ${issuer}\n` +
      `  shared state:            ${server.sharedState === 'redis' ? 'Redis (REDIS_URL)' : 'this process (memory)'}\n`,
  );

  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(`${signal} received, stopping\n`);
    server.close().then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(`error while stopping: ${(error as Error).message}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((error: unknown) => {
  process.stderr.write(`demo MCP server failed to start: ${(error as Error).message}\n`);
  process.exit(1);
});
