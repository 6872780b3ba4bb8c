import type { ResourceConfig } from '../config/types.js';

/** Lookup table of the configured protected resources and their scopes. */
export class ResourceRegistry {
  readonly #byUri = new Map<string, ResourceConfig>();
  readonly allScopes = new Set<string>();

  constructor(readonly resources: readonly ResourceConfig[]) {
    for (const r of resources) {
      this.#byUri.set(r.resource, r);
      for (const scope of Object.keys(r.scopes)) this.allScopes.add(scope);
    }
  }

  /** Exact string match (RFC 8707 + oidc-provider compares resources as strings: no normalisation, a trailing "/" differs). */
  get(resource: string): ResourceConfig | undefined {
    return this.#byUri.get(resource);
  }

  /** The default resource when a request names none: only when exactly one is configured. */
  get defaultResource(): string | undefined {
    return this.resources.length === 1 ? this.resources[0]!.resource : undefined;
  }

  describe(scope: string): string | undefined {
    for (const r of this.resources) {
      const d = r.scopes[scope];
      if (d !== undefined) return d;
    }
    return undefined;
  }
}
