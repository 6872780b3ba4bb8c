import {
  createResourceServer,
  type DpopOptions,
  type ResourceServerLogger,
  type RevocationList,
  type ValidationOutcome,
} from '@mcp-auth-kit/resource-server';
import { authorizationServerMetadataUrls, ConfigError, isLoopbackHost } from '@mcp-auth-kit/protocol';
import { Counter, Histogram, Registry } from 'prom-client';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, validateHostHeader, type AuthInfo } from '@modelcontextprotocol/server';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import helmet from 'helmet';
import { mcpCors } from './cors.js';
import { createNotesMcpServer, DEFAULT_AUTH_EXTENSIONS } from './mcp-server.js';
import { createStateBinding, type AuthExtensionsOptions } from '@mcp-auth-kit/resource-server/core';
import { randomBytes } from 'node:crypto';
import { NotesStore, type NotesRepository } from './notes-store.js';
import { DEFAULT_SCOPES, SCOPES_SUPPORTED, TOOL_SCOPES } from './scopes.js';

export interface DemoAppOptions {
  /** Canonical resource URI (RFC 8707), e.g. `http://localhost:3000/mcp`; the MCP endpoint is served at its path. */
  resource: string;
  /** Issuer of the authorization server whose tokens are accepted. */
  issuer: string;
  /** Browser origins allowed to call the endpoint (Streamable HTTP §Security); default: {@link defaultAllowedOrigins}. */
  allowedOrigins?: string[];
  /** Extra `Host` header hostnames to accept (DNS-rebinding guard); the resource's hostname and loopback names always are. */
  allowedHostnames?: string[];
  /** `scopes_supported` of the Protected Resource Metadata; default `['notes:read']` (minimal set, write by step-up). */
  scopesSupported?: string[];
  /** Notes storage; default a fresh in-memory store (`RedisNotesStore` for several replicas). */
  store?: NotesRepository;
  /** Out-of-band errors of the MCP layer (never sent to clients). Default: written to stderr without request data. */
  onError?: (error: Error) => void;
  /** Receives the middleware's private refusal reasons (never a token). Default: none. */
  logger?: ResourceServerLogger;
  /**
   * RFC 9449 DPoP at the MCP endpoint (resource-server `dpop` option). Default `true`: DPoP-bound
   * and Bearer tokens are both accepted; `{ required: true }` refuses Bearer; `false`: Bearer only.
   */
  dpop?: boolean | DpopOptions;
  /** Prometheus metrics at `/metrics` (token validations by outcome, request latency). Default false. */
  metrics?: boolean;
  /** Grants revoked before their tokens expire (resource-server `revocation` option). Default: none. */
  revocation?: RevocationList;
  /**
   * The demo drive (a third-party service, issue 41): the tool `drive_list_files` calls `api`
   * with a drive token that this server's confidential client (`clientId`, `clientSecret`) gets
   * from the authorization server by RFC 8693 token exchange. Default: no drive tool.
   */
  drive?: { api: string; clientId: string; clientSecret: string };
  /**
   * The MCP authorization extensions the authorization server supports, advertised in
   * `server/discover` (and `initialize`). Default: client credentials (our AS always has it);
   * enterprise-managed authorization only when the AS trusts an IdP (`ID_JAG_ISSUER`).
   */
  authExtensions?: AuthExtensionsOptions;
  /**
   * Key of the `list_notes` cursors (state handles bound to the caller), at least 32 bytes, the
   * same on every replica (`MCP_STATE_SECRET`). Default: random per process (one replica).
   */
  stateSecret?: string;
}

export interface DemoApp {
  app: Express;
  resource: string;
  /** Path of the MCP endpoint (the resource's path). */
  mcpPath: string;
  store: NotesRepository;
  /** The metrics registry when `metrics` is on. */
  registry?: Registry;
  /** From now on `/readyz` answers 503 (shutdown: balancers stop sending traffic). */
  drain(): void;
  /** Stops in-flight MCP exchanges and releases the middleware (JWKS cache, timers). */
  close(): Promise<void>;
}

/** Token validations (via the resource server's `onValidation` hook) and request latency. */
function demoMetrics() {
  const registry = new Registry();
  const validations = new Counter({
    name: 'mcp_resource_token_validations_total',
    help: 'Protected requests by outcome: ok, or refused with the reason',
    labelNames: ['outcome', 'reason'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'mcp_resource_http_request_duration_seconds',
    help: 'HTTP request latency by route',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  validations.inc({ outcome: 'ok', reason: '' }, 0);
  return {
    registry,
    validation(outcome: ValidationOutcome) {
      validations.inc(outcome.ok ? { outcome: 'ok', reason: '' } : { outcome: 'refused', reason: outcome.reason });
    },
    observe(method: string, route: string, status: number, seconds: number) {
      duration.observe({ method: /^[A-Z]{1,10}$/.test(method) ? method : 'other', route, status: String(status) }, seconds);
    },
  };
}

/** Readiness: the authorization server's metadata answers (new tokens cannot be checked without its keys). */
async function authorizationServerAnswers(issuer: string): Promise<boolean> {
  for (const url of authorizationServerMetadataUrls(issuer)) {
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      await res.body?.cancel();
      if (res.ok) return true;
    } catch {
      // next URL
    }
  }
  return false;
}

/** The names one loopback server answers under in a browser. */
const LOOPBACK_HOSTNAMES = ['localhost', '127.0.0.1', '[::1]'];

/**
 * Default browser origins: the resource's own origin and, for a loopback resource, the same
 * server under its other loopback names (same scheme and port): `http://127.0.0.1:3000` is the
 * same server as `http://localhost:3000`, while other local ports stay refused.
 */
export function defaultAllowedOrigins(resourceUrl: URL): string[] {
  const origins = [resourceUrl.origin];
  if (isLoopbackHost(resourceUrl.hostname)) {
    const port = resourceUrl.port ? `:${resourceUrl.port}` : '';
    for (const host of LOOPBACK_HOSTNAMES) origins.push(`${resourceUrl.protocol}//${host}${port}`);
  }
  return [...new Set(origins)];
}

/**
 * Default sink for the MCP layer's out-of-band errors. Client rejections carry client-supplied
 * header values in their message: only their kind is logged, and every line is bounded.
 */
function defaultOnError(error: Error): void {
  const rejection = /^Rejected inbound request \([^)]*\)/.exec(error.message);
  const line = (rejection ? rejection[0] : error.message).replace(/[\r\n]+/g, ' ').slice(0, 300);
  process.stderr.write(`demo-mcp-server: ${line}\n`);
}

/** An express request after `rs.protect`: `auth` holds the validated token. */
type AuthenticatedRequest = Request & { auth?: AuthInfo };

/**
 * The middleware's `req.auth` in the exact shape the SDK expects: `resource` as a URL and the
 * PRM URL attached, so the SDK's own per-tool scope challenges advertise the same metadata.
 */
function sdkAuthInfo(auth: AuthInfo, resourceMetadataUrl: string): AuthInfo {
  const resource: unknown = auth.resource;
  const info: AuthInfo = { ...auth, resourceMetadataUrl: auth.resourceMetadataUrl ?? resourceMetadataUrl };
  if (typeof resource === 'string') info.resource = new URL(resource);
  return info;
}

/** What {@link ConfigError}'s message names: "Invalid demo MCP server configuration:". */
export const CONFIG_SUBJECT = 'demo MCP server';

function parseAbsoluteUrl(problems: string[], value: string, name: string): URL | undefined {
  if (URL.canParse(value)) return new URL(value);
  problems.push(`${name} must be an absolute URL`);
  return undefined;
}

/**
 * The demo MCP server as an express app: Protected Resource Metadata, `/healthz`, and the MCP
 * endpoint behind `@mcp-auth-kit/resource-server`. The endpoint answers the 2026-07-28 stateless
 * wire and, through the SDK's stateless fallback, the 2025-11-25 wire (initialize handshake, no
 * `Mcp-Session-Id`) from one server factory.
 */
export function createDemoApp(options: DemoAppOptions): DemoApp {
  const problems: string[] = [];
  const resourceUrl = parseAbsoluteUrl(problems, options.resource, 'resource');
  parseAbsoluteUrl(problems, options.issuer, 'issuer');
  if (resourceUrl?.hash) problems.push('resource must not contain a fragment (RFC 8707 §2)');
  // (`resourceUrl` is set whenever no problem was found; the test narrows its type.)
  if (problems.length > 0 || resourceUrl === undefined) throw new ConfigError(problems, CONFIG_SUBJECT);
  // Kept verbatim: it is the audience the AS puts in tokens (RFC 8707), so no re-serialisation.
  const resource = options.resource;
  const mcpPath = resourceUrl.pathname === '' ? '/' : resourceUrl.pathname;
  const store = options.store ?? new NotesStore();
  const onError = options.onError ?? defaultOnError;

  const allowedOrigins = options.allowedOrigins ?? defaultAllowedOrigins(resourceUrl);
  const metrics = options.metrics ? demoMetrics() : undefined;
  const logger: ResourceServerLogger | undefined =
    metrics !== undefined
      ? {
          ...(options.logger?.debug && { debug: options.logger.debug.bind(options.logger) }),
          ...(options.logger?.info && { info: options.logger.info.bind(options.logger) }),
          ...(options.logger?.warn && { warn: options.logger.warn.bind(options.logger) }),
          onValidation: (outcome) => {
            metrics.validation(outcome);
            options.logger?.onValidation?.(outcome);
          },
        }
      : options.logger;
  let draining = false;
  const rs = createResourceServer({
    resource,
    authorizationServers: [options.issuer],
    // RFC 9728 resource_name; the auth-server app shows the same name on its consent page.
    resourceName: 'Demo notes',
    scopesSupported: options.scopesSupported ?? [...SCOPES_SUPPORTED],
    scopePolicy: {
      default: [...DEFAULT_SCOPES],
      tools: { add_note: [...TOOL_SCOPES.add_note], list_notes: [...TOOL_SCOPES.list_notes] },
    },
    allowedOrigins,
    dpop: options.dpop ?? true,
    ...(options.revocation && { revocation: options.revocation }),
    ...(logger && { logger }),
    ...(options.drive && { thirdParty: { clientId: options.drive.clientId, clientSecret: options.drive.clientSecret } }),
  });
  const resourceMetadataUrl = rs.metadataUrl;

  const driveApi = options.drive?.api;
  const authExtensions = options.authExtensions ?? DEFAULT_AUTH_EXTENSIONS;
  // list_notes cursors: state handles bound to the caller (one secret for every replica: MCP_STATE_SECRET)
  const state = createStateBinding({ secret: options.stateSecret ?? randomBytes(32) });
  const mcp = createMcpHandler(() => createNotesMcpServer(store, { authExtensions, state, ...(driveApi !== undefined && { driveApi }) }), {
    legacy: 'stateless',
    onerror: onError,
  });
  const mcpNode = toNodeHandler(mcp, { onerror: onError });

  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', false);
  // A JSON API: nothing may be rendered, framed or loaded from its responses.
  app.use(
    helmet({
      contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
    }),
  );

  if (metrics) {
    app.use((req: Request, res: Response, next: NextFunction) => {
      const started = process.hrtime.bigint();
      res.once('finish', () => {
        const route =
          req.path === mcpPath
            ? 'mcp'
            : req.path.startsWith('/.well-known/')
              ? 'metadata'
              : ['/healthz', '/readyz', '/metrics'].includes(req.path)
                ? req.path.slice(1)
                : 'other';
        metrics.observe(req.method, route, res.statusCode, Number(process.hrtime.bigint() - started) / 1e9);
      });
      next();
    });
  }

  // Liveness: the process serves HTTP.
  app.get('/healthz', (_req, res) => {
    res.set('cache-control', 'no-store').json({ status: 'ok' });
  });
  // Readiness: not shutting down, and the authorization server (metadata, keys) answers.
  app.get('/readyz', async (_req, res) => {
    res.set('cache-control', 'no-store');
    if (draining) {
      res.status(503).json({ status: 'draining' });
      return;
    }
    const asUp = await authorizationServerAnswers(options.issuer);
    res.status(asUp ? 200 : 503).json({ status: asUp ? 'ok' : 'unavailable', checks: { authorization_server: asUp ? 'ok' : 'down' } });
  });
  if (metrics) {
    app.get('/metrics', async (_req, res, next) => {
      try {
        res
          .set('cache-control', 'no-store')
          .set('content-type', metrics.registry.contentType)
          .send(await metrics.registry.metrics());
      } catch (error) {
        next(error);
      }
    });
  }

  // DNS rebinding (Streamable HTTP §Security): only our own names may be in Host, whatever the Origin.
  const allowedHostnames = [...new Set([resourceUrl.hostname.toLowerCase(), ...LOOPBACK_HOSTNAMES, ...(options.allowedHostnames ?? [])])];
  app.use((req: Request, res: Response, next: NextFunction) => {
    const result = validateHostHeader(req.headers.host, allowedHostnames);
    if (result.ok) return next();
    res.status(403).json({ jsonrpc: '2.0', error: { code: -32000, message: 'Forbidden: Host not allowed' }, id: null });
  });

  app.use(rs.metadataHandler);

  app.all(mcpPath, mcpCors(allowedOrigins), rs.protect, (req: AuthenticatedRequest, res: Response) => {
    if (req.auth) req.auth = sdkAuthInfo(req.auth, resourceMetadataUrl);
    mcpNode(req, res, req.body).catch((error: unknown) => {
      onError(error instanceof Error ? error : new Error(String(error)));
      if (!res.headersSent) res.status(500).end();
    });
  });

  // Unknown paths: a plain 404, never express's HTML page.
  app.use((_req: Request, res: Response) => {
    res.status(404).json({ error: 'not_found' });
  });

  // Bad input (e.g. a body a parser refused) must never surface as a stack or a 500.
  app.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const raw = (error as { status?: unknown }).status;
    const status = typeof raw === 'number' && raw >= 400 && raw < 600 ? raw : 500;
    if (status >= 500) onError(error instanceof Error ? error : new Error(String(error)));
    if (res.headersSent) return;
    const parseError = (error as { type?: unknown }).type === 'entity.parse.failed';
    res.status(status).json({
      jsonrpc: '2.0',
      error:
        status >= 500
          ? { code: -32603, message: 'Internal error' }
          : { code: parseError ? -32700 : -32600, message: parseError ? 'Parse error' : 'Invalid request' },
      id: null,
    });
  });

  return {
    app,
    resource,
    mcpPath,
    store,
    ...(metrics && { registry: metrics.registry }),
    drain() {
      draining = true;
    },
    async close() {
      draining = true;
      await mcp.close();
      await rs.close();
      metrics?.registry.clear();
    },
  };
}
