import { assertAllowedUrl, type UrlPolicy } from './url.js';
import { assertPublicHost, type Resolver } from './network.js';

export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

export interface HttpDeps extends UrlPolicy {
  fetch: FetchLike;
  /** Refuse hosts that are or resolve to private/reserved addresses (server-side deployments). */
  blockPrivateNetworks?: boolean;
  /** DNS resolver for {@link HttpDeps.blockPrivateNetworks} (tests). */
  resolve?: Resolver;
}

async function checkTarget(url: URL, what: string, deps: HttpDeps): Promise<URL> {
  const checked = assertAllowedUrl(url, what, deps);
  if (deps.blockPrivateNetworks) await assertPublicHost(checked, what, deps.resolve);
  return checked;
}

const MAX_REDIRECTS = 3;

/**
 * GET that follows at most a few redirects by hand, applying the URL policy to every hop
 * (Security Best Practices, SSRF: "validate redirect targets").
 */
export async function guardedGet(url: URL, deps: HttpDeps, what: string, headers: Record<string, string> = {}): Promise<Response> {
  let target = await checkTarget(url, what, deps);
  for (let hop = 0; ; hop++) {
    const res = await deps.fetch(target, { method: 'GET', headers: { accept: 'application/json', ...headers }, redirect: 'manual' });
    const location = res.headers.get('location');
    if (res.status >= 300 && res.status < 400 && location && hop < MAX_REDIRECTS) {
      await res.body?.cancel();
      target = await checkTarget(new URL(location, target), `${what} (redirect)`, deps);
      continue;
    }
    return res;
  }
}

/** A fetch for oauth4webapi that refuses URLs outside the policy before any byte is sent. */
export function policyFetch(deps: HttpDeps): FetchLike {
  return async (input, init) => {
    const url = input instanceof Request ? input.url : input;
    await checkTarget(url instanceof URL ? url : new URL(url), 'authorization server endpoint', deps);
    return deps.fetch(input, init);
  };
}

/** Reads a JSON object body; undefined when the body is not a JSON object. */
export async function readJsonObject(res: Response): Promise<Record<string, unknown> | undefined> {
  try {
    const body: unknown = await res.json();
    return body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
