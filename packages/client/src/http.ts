import { allowsEveryAddress, egressRefusal, type EgressPolicy } from '@mcp-auth-kit/protocol';
import { ERR, McpAuthError } from './errors.js';
import { assertAllowedUrl, type UrlPolicy } from './url.js';
import { assertEgressAllowed, egressDispatcher, egressRefusalMessage, type Resolver } from './network.js';

export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

export interface HttpDeps extends UrlPolicy {
  fetch: FetchLike;
  /**
   * Addresses OAuth-related requests may reach (the protocol egress policy, checked before the
   * request and again on the address connected to). Undefined: no address restriction, for
   * endpoints the caller configured itself; {@link McpAuthClient} always sets it.
   */
  egress?: EgressPolicy | undefined;
  /** DNS resolver for the egress checks (tests). */
  resolve?: Resolver;
}

function restricted(deps: HttpDeps): EgressPolicy | undefined {
  return deps.egress && !allowsEveryAddress(deps.egress) ? deps.egress : undefined;
}

async function checkTarget(url: URL, what: string, deps: HttpDeps): Promise<URL> {
  const checked = assertAllowedUrl(url, what, deps);
  const policy = restricted(deps);
  if (policy) await assertEgressAllowed(checked, policy, what, deps.resolve);
  return checked;
}

/**
 * The one way OAuth-related requests leave the client: `deps.fetch` with the egress dispatcher,
 * so the connection goes only to an address the policy allows. A refusal at connect time (the
 * name answered differently than at the check) becomes URL_FORBIDDEN like the early check.
 */
async function egressFetch(input: string | URL | Request, init: RequestInit, deps: HttpDeps, what: string): Promise<Response> {
  const policy = restricted(deps);
  const dispatcher = policy && egressDispatcher(policy, deps.resolve);
  const options = dispatcher ? ({ ...init, dispatcher } as RequestInit) : init;
  try {
    return await deps.fetch(input, options);
  } catch (err) {
    const refusal = egressRefusal(err);
    if (refusal) throw new McpAuthError(ERR.URL_FORBIDDEN, egressRefusalMessage(what, refusal.reason), { cause: err });
    throw err;
  }
}

const MAX_REDIRECTS = 3;

/**
 * GET that follows at most a few redirects by hand, applying the URL policy to every hop
 * (Security Best Practices, SSRF: "validate redirect targets").
 */
export async function guardedGet(url: URL, deps: HttpDeps, what: string, headers: Record<string, string> = {}): Promise<Response> {
  let target = await checkTarget(url, what, deps);
  for (let hop = 0; ; hop++) {
    const res = await egressFetch(
      target,
      { method: 'GET', headers: { accept: 'application/json', ...headers }, redirect: 'manual' },
      deps,
      what,
    );
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
  const what = 'authorization server endpoint';
  return async (input, init) => {
    const url = input instanceof Request ? input.url : input;
    await checkTarget(url instanceof URL ? url : new URL(url), what, deps);
    return egressFetch(input, init ?? {}, deps, what);
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
