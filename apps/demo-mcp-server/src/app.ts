import {
  createResourceServer,
  type DpopOptions,
  type ResourceServer,
  type ResourceServerLogger,
  type RevocationList,
} from '@mcp-auth-kit/resource-server';
import { authorizationServerMetadataUrls, ConfigError, isLoopbackHost } from '@mcp-auth-kit/protocol';
import type { Registry } from 'prom-client';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, type AuthInfo } from '@modelcontextprotocol/server';
import express, { type Express, type Request, type Response } from 'express';
import helmet from 'helmet';
import { mcpCors } from './cors.js';
import { DEMO_DEFAULTS } from './defaults.js';
import { asError, defaultOnError, errorHandler, hostGuard, notFound } from './http-guards.js';
import { createNotesMcpServer } from './mcp-server.js';
import { countingLogger, demoMetrics, type DemoMetrics, metricsHandler, observeRequests } from './metrics.js';
import { createStateBinding, type AuthExtensionsOptions } from '@mcp-auth-kit/resource-server/core';
import { randomBytes } from 'node:crypto';
import { NotesStore, type NotesRepository } from './notes-store.js';
import { DEFAULT_SCOPES, TOOL_SCOPES } from './scopes.js';

export interface DemoAppOptions {
  /** Canonical resource URI (RFC 8707), e.g. `http://localhost:3000/mcp`; the MCP endpoint is served at its path. */
  resource: string;
  /** Issuer of the authorization server whose tokens are accepted. */
  issuer: string;
  /** Browser origins allowed to call the endpoint (Streamable HTTP §Security); default: {@link defaultAllowedOrigins}. */
  allowedOrigins?: string[];
  /** Extra `Host` header hostnames to accept (DNS-rebinding guard); the resource's hostname and loopback names always are. */
  allowedHostnames?: string[];
  /** `scopes_supported` of the Protected Resource Metadata; default {@link DEMO_DEFAULTS}`.scopesSupported` (minimal set, write by step-up). */
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

/** The options {@link createDemoApp} builds from: checked, with every default filled in. */
interface ResolvedDemoOptions {
  /** Kept verbatim: it is the audience the AS puts in tokens (RFC 8707), so no re-serialisation. */
  resource: string;
  mcpPath: string;
  store: NotesRepository;
  onError: (error: Error) => void;
  allowedOrigins: string[];
  allowedHostnames: string[];
}

/** Every problem of the URLs at once (one {@link ConfigError}), then the defaults. */
function resolveDemoOptions(options: DemoAppOptions): ResolvedDemoOptions {
  const problems: string[] = [];
  const resourceUrl = parseAbsoluteUrl(problems, options.resource, 'resource');
  parseAbsoluteUrl(problems, options.issuer, 'issuer');
  if (resourceUrl?.hash) problems.push('resource must not contain a fragment (RFC 8707 §2)');
  // (`resourceUrl` is set whenever no problem was found; the test narrows its type.)
  if (problems.length > 0 || resourceUrl === undefined) throw new ConfigError(problems, CONFIG_SUBJECT);
  return {
    resource: options.resource,
    mcpPath: resourceUrl.pathname === '' ? '/' : resourceUrl.pathname,
    store: options.store ?? new NotesStore(),
    onError: options.onError ?? defaultOnError,
    allowedOrigins: options.allowedOrigins ?? defaultAllowedOrigins(resourceUrl),
    allowedHostnames: [...new Set([resourceUrl.hostname.toLowerCase(), ...LOOPBACK_HOSTNAMES, ...(options.allowedHostnames ?? [])])],
  };
}

/** The `@mcp-auth-kit/resource-server` middleware for the notes resource. */
function notesResourceServer(options: DemoAppOptions, demo: ResolvedDemoOptions, logger: ResourceServerLogger | undefined): ResourceServer {
  return createResourceServer({
    resource: demo.resource,
    authorizationServers: [options.issuer],
    // RFC 9728 resource_name; the auth-server app shows the same name on its consent page.
    resourceName: 'Demo notes',
    scopesSupported: options.scopesSupported ?? [...DEMO_DEFAULTS.scopesSupported],
    scopePolicy: {
      default: [...DEFAULT_SCOPES],
      tools: { add_note: [...TOOL_SCOPES.add_note], list_notes: [...TOOL_SCOPES.list_notes] },
    },
    allowedOrigins: demo.allowedOrigins,
    dpop: options.dpop ?? DEMO_DEFAULTS.dpop,
    ...(options.revocation && { revocation: options.revocation }),
    ...(logger && { logger }),
    ...(options.drive && { thirdParty: { clientId: options.drive.clientId, clientSecret: options.drive.clientSecret } }),
  });
}

/** The SDK's MCP handler: one notes server per request (2026-07-28 stateless, 2025-11-25 by fallback). */
function notesMcpHandler(options: DemoAppOptions, demo: ResolvedDemoOptions) {
  const driveApi = options.drive?.api;
  const authExtensions = options.authExtensions ?? DEMO_DEFAULTS.authExtensions;
  // list_notes cursors: state handles bound to the caller (one secret for every replica: MCP_STATE_SECRET)
  const state = createStateBinding({ secret: options.stateSecret ?? randomBytes(DEMO_DEFAULTS.stateSecretBytes) });
  return createMcpHandler(() => createNotesMcpServer(demo.store, { authExtensions, state, ...(driveApi !== undefined && { driveApi }) }), {
    legacy: 'stateless',
    onerror: demo.onError,
  });
}

/** Liveness and readiness (not draining, and the authorization server's metadata and keys answer). */
function healthRoutes(app: Express, issuer: string, draining: () => boolean): void {
  // Liveness: the process serves HTTP.
  app.get('/healthz', (_req, res) => {
    res.set('cache-control', 'no-store').json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    res.set('cache-control', 'no-store');
    if (draining()) {
      res.status(503).json({ status: 'draining' });
      return;
    }
    const asUp = await authorizationServerAnswers(issuer);
    res.status(asUp ? 200 : 503).json({ status: asUp ? 'ok' : 'unavailable', checks: { authorization_server: asUp ? 'ok' : 'down' } });
  });
}

/** An express app that renders nothing: a JSON API may not be framed or loaded from its responses. */
function jsonApiApp(): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', false);
  app.use(
    helmet({
      contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
    }),
  );
  return app;
}

/**
 * The demo MCP server as an express app: Protected Resource Metadata, `/healthz`, and the MCP
 * endpoint behind `@mcp-auth-kit/resource-server`. The endpoint answers the 2026-07-28 stateless
 * wire and, through the SDK's stateless fallback, the 2025-11-25 wire (initialize handshake, no
 * `Mcp-Session-Id`) from one server factory.
 */
export function createDemoApp(options: DemoAppOptions): DemoApp {
  const demo = resolveDemoOptions(options);
  const { mcpPath, onError } = demo;
  const metrics: DemoMetrics | undefined = options.metrics ? demoMetrics() : undefined;
  const rs = notesResourceServer(options, demo, metrics ? countingLogger(metrics, options.logger) : options.logger);
  const mcp = notesMcpHandler(options, demo);
  const mcpNode = toNodeHandler(mcp, { onerror: onError });
  const resourceMetadataUrl = rs.metadataUrl;
  let draining = false;

  const app = jsonApiApp();
  if (metrics) app.use(observeRequests(metrics, mcpPath));
  healthRoutes(app, options.issuer, () => draining);
  if (metrics) app.get('/metrics', metricsHandler(metrics));
  app.use(hostGuard(demo.allowedHostnames));
  app.use(rs.metadataHandler);
  app.all(mcpPath, mcpCors(demo.allowedOrigins), rs.protect, (req: AuthenticatedRequest, res: Response) => {
    if (req.auth) req.auth = sdkAuthInfo(req.auth, resourceMetadataUrl);
    mcpNode(req, res, req.body).catch((error: unknown) => {
      onError(asError(error));
      if (!res.headersSent) res.status(500).end();
    });
  });
  app.use(notFound);
  app.use(errorHandler(onError));

  return {
    app,
    resource: demo.resource,
    mcpPath,
    store: demo.store,
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
