/** Per-token access token lifetimes (`lifetime` option) on an AS that reads one TTL per resource. */
import type { ResourceConfig } from '@mcp-auth-kit/authorization-server';
import type { TokenResponse } from './code-flow.js';

export type MintWith = (
  resource: ResourceConfig | undefined,
  lifetime: number | undefined,
  send: () => Promise<TokenResponse>,
) => Promise<TokenResponse>;

/**
 * The AS reads a resource's accessTokenTTL when it mints a token (token endpoint). Every token
 * request goes through one queue so a `lifetime` set for one request never leaks into a
 * concurrent one.
 */
export function createTokenMinter(): MintWith {
  const queue = createMutex();
  return (resource, lifetime, send) =>
    queue(async () => {
      if (!resource || lifetime === undefined) return send();
      const saved = resource.accessTokenTTL;
      resource.accessTokenTTL = lifetime;
      try {
        return await send();
      } finally {
        if (saved === undefined) delete resource.accessTokenTTL;
        else resource.accessTokenTTL = saved;
      }
    });
}

/** Runs async jobs one at a time, in call order. */
function createMutex() {
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(run: () => Promise<T>): Promise<T> => {
    const result = tail.then(run, run);
    tail = result.catch(() => undefined);
    return result;
  };
}
