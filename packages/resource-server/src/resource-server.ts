import type { RequestHandler } from 'express';
import { createMetadataHandler } from './express/metadata-handler.js';
import { createProtectHandler } from './express/protect.js';
import type { ProtectedResourceMetadata } from './metadata.js';
import type { ResourceServerOptions } from './config/types.js';
import { createInternalCore, type ResourceServerCore } from './resource-server-core.js';
import type { VerifiedAccessToken } from './types.js';

/** What {@link createResourceServer} returns. */
export interface ResourceServer {
  /** express middleware serving RFC 9728 metadata at the path-based (and root) well-known URLs. */
  readonly metadataHandler: RequestHandler;
  /** express middleware guarding the MCP endpoint; sets `req.auth` (SDK `AuthInfo`). */
  readonly protect: RequestHandler;
  /** The RFC 9728 document served. */
  readonly metadata: ProtectedResourceMetadata;
  /** URL of the path-based metadata document (used as `resource_metadata` in challenges). */
  readonly metadataUrl: string;
  /** Validates a token without HTTP (cache → JWT or introspection). */
  verifyAccessToken(token: string): Promise<VerifiedAccessToken>;
  /** The framework-neutral core, for other adapters. */
  readonly core: ResourceServerCore;
  /** Releases caches; the instance must not be used afterwards. */
  close(): Promise<void>;
}

/**
 * Creates the resource-server side of MCP authorization for one MCP endpoint.
 * Options are checked now: a bad configuration throws one `ConfigError` (a `TypeError`,
 * `code: 'ERR_INVALID_CONFIG'`) whose `problems` list every bad option.
 *
 * @example
 * const rs = createResourceServer({
 *   resource: 'http://localhost:3000/mcp',
 *   authorizationServers: ['http://localhost:9000'],
 *   scopesSupported: ['notes:read', 'notes:write'],
 *   scopePolicy: { default: ['notes:read'], tools: { add_note: ['notes:write'] } },
 * });
 * app.use(rs.metadataHandler);
 * app.all('/mcp', rs.protect, mcpHandler);
 */
export function createResourceServer(options: ResourceServerOptions): ResourceServer {
  const core = createInternalCore(options);
  const paths = [new URL(core.metadataUrl).pathname];
  if (core.options.serveRootMetadata) paths.push('/.well-known/oauth-protected-resource');
  return {
    metadataHandler: createMetadataHandler(core.metadata, paths),
    protect: createProtectHandler(core),
    metadata: core.metadata,
    metadataUrl: core.metadataUrl,
    verifyAccessToken: (token) => core.verifyAccessToken(token),
    core,
    async close() {
      core.verifier.clear();
      core.thirdParty?.clear();
    },
  };
}
