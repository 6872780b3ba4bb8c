import { createResourceServer, type DpopOptions, type ResourceServerLogger } from '@mcp-auth-kit/resource-server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, validateHostHeader, type AuthInfo } from '@modelcontextprotocol/server';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import helmet from 'helmet';
import { mcpCors } from './cors.js';
import { createNotesMcpServer } from './mcp-server.js';
import { NotesStore } from './notes-store.js';
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
  /** Notes storage; default a fresh in-memory store. */
  store?: NotesStore;
  /** Out-of-band errors of the MCP layer (never sent to clients). Default: written to stderr without request data. */
  onError?: (error: Error) => void;
  /** Receives the middleware's private refusal reasons (never a token). Default: none. */
  logger?: ResourceServerLogger;
  /**
   * RFC 9449 DPoP at the MCP endpoint (resource-server `dpop` option). Default `true`: DPoP-bound
   * and Bearer tokens are both accepted; `{ required: true }` refuses Bearer; `false`: Bearer only.
   */
  dpop?: boolean | DpopOptions;
}

export interface DemoApp {
  app: Express;
  resource: string;
  /** Path of the MCP endpoint (the resource's path). */
  mcpPath: string;
  store: NotesStore;
  /** Stops in-flight MCP exchanges and releases the middleware (JWKS cache, timers). */
  close(): Promise<void>;
}

const LOOPBACK_HOSTNAMES = ['localhost', '127.0.0.1', '[::1]'];

/**
 * Default browser origins: the resource's own origin and, for a loopback resource, the same
 * server under its other loopback names (same scheme and port): `http://127.0.0.1:3000` is the
 * same server as `http://localhost:3000`, while other local ports stay refused.
 */
export function defaultAllowedOrigins(resourceUrl: URL): string[] {
  const origins = [resourceUrl.origin];
  if (LOOPBACK_HOSTNAMES.includes(resourceUrl.hostname)) {
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

function parseAbsoluteUrl(value: string, name: string): URL {
  try {
    return new URL(value);
  } catch {
    throw new TypeError(`${name} must be an absolute URL`);
  }
}

/**
 * The demo MCP server as an express app: Protected Resource Metadata, `/healthz`, and the MCP
 * endpoint behind `@mcp-auth-kit/resource-server`. The endpoint answers the 2026-07-28 stateless
 * wire and, through the SDK's stateless fallback, the 2025-11-25 wire (initialize handshake, no
 * `Mcp-Session-Id`) from one server factory.
 */
export function createDemoApp(options: DemoAppOptions): DemoApp {
  const resourceUrl = parseAbsoluteUrl(options.resource, 'resource');
  parseAbsoluteUrl(options.issuer, 'issuer');
  if (resourceUrl.hash) throw new TypeError('resource must not contain a fragment (RFC 8707 §2)');
  // Kept verbatim: it is the audience the AS puts in tokens (RFC 8707), so no re-serialisation.
  const resource = options.resource;
  const mcpPath = resourceUrl.pathname === '' ? '/' : resourceUrl.pathname;
  const store = options.store ?? new NotesStore();
  const onError = options.onError ?? defaultOnError;

  const allowedOrigins = options.allowedOrigins ?? defaultAllowedOrigins(resourceUrl);
  const rs = createResourceServer({
    resource,
    authorizationServers: [options.issuer],
    scopesSupported: options.scopesSupported ?? [...SCOPES_SUPPORTED],
    scopePolicy: {
      default: [...DEFAULT_SCOPES],
      tools: { add_note: [...TOOL_SCOPES.add_note], list_notes: [...TOOL_SCOPES.list_notes] },
    },
    allowedOrigins,
    dpop: options.dpop ?? true,
    ...(options.logger && { logger: options.logger }),
  });
  const resourceMetadataUrl = rs.metadataUrl;

  const mcp = createMcpHandler(() => createNotesMcpServer(store), { legacy: 'stateless', onerror: onError });
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

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });

  // DNS rebinding (Streamable HTTP §Security): only our own names may be in Host, whatever the Origin.
  const allowedHostnames = [
    ...new Set([resourceUrl.hostname.toLowerCase(), ...LOOPBACK_HOSTNAMES, ...(options.allowedHostnames ?? [])]),
  ];
  app.use((req: Request, res: Response, next: NextFunction) => {
    const result = validateHostHeader(req.headers.host, allowedHostnames);
    if (result.ok) return next();
    res.status(403).json({ jsonrpc: '2.0', error: { code: -32000, message: 'Forbidden: Host not allowed' }, id: null });
  });

  app.use(rs.metadataRouter);

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
    async close() {
      await mcp.close();
      await rs.close();
    },
  };
}
