import { ANY_ADDRESS, type AuthExtension, egressPolicyForPeer } from '@mcp-auth-kit/protocol';
import { usedExtensions } from './extension-declarations.js';
import type { HttpDeps } from '../http.js';
import { MemoryStore, type AuthStore } from '../store.js';
import type { ClientCredentialsConfig, JwtBearerConfig, McpAuthEvent, ResolvedClientOptions } from '../config/types.js';

/** The options of one McpAuthClient as its parts read them: store, HTTP, events, grant choice. */
export class ClientContext {
  readonly opts: ResolvedClientOptions;
  readonly store: AuthStore;
  /** Without an egress policy: requests a peer names go through {@link depsFor} instead. */
  readonly deps: HttpDeps;
  /** The authorization extensions this client uses, declared in each 2026-07-28 request. */
  readonly extensions: readonly AuthExtension[];

  constructor(options: ResolvedClientOptions) {
    this.opts = options;
    this.extensions = usedExtensions(options);
    this.store = options.store ?? new MemoryStore();
    const baseFetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.deps = {
      fetch: baseFetch,
      limits: { timeoutMs: options.requestTimeoutMs, maxResponseBytes: options.maxResponseBytes, maxMessageBytes: options.maxMessageBytes },
      ...(options.allowInsecureRequests && { allowInsecureRequests: true }),
    };
  }

  emit(event: McpAuthEvent) {
    try {
      this.opts.onEvent?.(event);
    } catch {
      // A faulty progress listener must not break authorization.
    }
  }

  /** The requests made for an MCP server, under the egress policy its URL earns (see `privateNetworks`). */
  depsFor(server: string): HttpDeps {
    const mode = this.opts.privateNetworks;
    const egress = mode === 'allow' ? ANY_ADDRESS : egressPolicyForPeer(server, { blockLoopback: mode === 'block' });
    return { ...this.deps, egress };
  }

  get wantRefresh() {
    return this.opts.refreshTokens;
  }

  /** The non-interactive grant configured, if any. */
  get machine(): ClientCredentialsConfig | JwtBearerConfig | undefined {
    return this.opts.jwtBearer ?? this.opts.clientCredentials;
  }
}
