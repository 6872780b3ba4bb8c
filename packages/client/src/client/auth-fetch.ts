import { dpopResourceRequest } from '../dpop.js';
import { resourceFetch } from '../http.js';
import { scopeCovers, splitScope, unionScope } from '../scope.js';
import type { ServerBinding, StoredTokens } from '../store.js';
import { serverKey } from '../url.js';
import { oauthChallenge } from '../www-authenticate.js';
import type { Authorizer } from './authorization-flows.js';
import type { ClientContext } from './context.js';
import type { DpopKeys } from './dpop-keys.js';
import { discoverBinding, scopeToRequest } from './server-binding.js';
import type { TokenKeeper } from './tokens.js';
import { outgoingRequest, type OutgoingRequest } from './outgoing-request.js';
import { declaringRequest } from './extension-declarations.js';

/** The parts of an McpAuthClient that its requests to MCP servers go through. */
export interface AuthFetchParts {
  readonly context: ClientContext;
  readonly dpopKeys: DpopKeys;
  readonly keeper: TokenKeeper;
  readonly authorizer: Authorizer;
  /** (resource, scope set) pairs whose step-up did not help: never retried in this client. */
  readonly failedStepUps: Set<string>;
}

/**
 * One request to the MCP server with the given tokens: DPoP-bound ones with a proof from their
 * key (RFC 9449 §7), others as Bearer (RFC 6750 §2.1); without tokens, as it is.
 */
export async function sendWithTokens(
  parts: Pick<AuthFetchParts, 'context' | 'dpopKeys'>,
  binding: ServerBinding | undefined,
  tokens: StoredTokens | undefined,
  original: OutgoingRequest,
): Promise<Response> {
  const dpopKey = tokens?.dpop_jkt && binding ? await parts.dpopKeys.keyFor(binding, tokens.client_id) : undefined;
  if (tokens && dpopKey) return dpopResourceRequest(original, await original.body(), tokens.access_token, dpopKey, parts.context.deps);
  const headers = new Headers(original.headers);
  if (tokens) headers.set('authorization', `Bearer ${tokens.access_token}`);
  // The body fixed once per call and sent as it is: a Request per attempt (clone, tee, new
  // Request) cost more than the request itself on a loopback MCP server.
  return resourceFetch(parts.context.deps, original.url, {
    method: original.method,
    headers,
    body: (await original.body()) ?? null,
    ...(original.signal !== undefined && { signal: original.signal }),
    ...(original.redirect !== undefined && { redirect: original.redirect }),
  });
}

/**
 * fetch with MCP authorization: attaches the bound access token, refreshes it when expired or
 * on 401 `invalid_token`, runs discovery + authorization on 401, steps up on 403
 * `insufficient_scope` with the scope union (bounded retries), and retries the request.
 * The final response is returned as is (e.g. a 403 when step-up is exhausted).
 */
export async function authorizedFetch(parts: AuthFetchParts, input: string | URL | Request, init?: RequestInit): Promise<Response> {
  const { context, keeper, authorizer, failedStepUps } = parts;
  // MCP 2026-07-28: the extensions in use are declared in each request (extension negotiation).
  const original = declaringRequest(outgoingRequest(input, init), context.extensions);
  const server = serverKey(original.url);
  const maxStepUps = context.opts.maxStepUpAttempts;
  let refreshed = false;
  let authorized = false;
  let stepUps = 0;
  let lastStepUpKey: string | undefined;
  /** Access tokens the server refused during this call: never sent again (guarantees termination). */
  const refused = new Set<string>();
  for (let round = 0; ; round++) {
    const binding = await context.store.getServer(server);
    const candidate = binding ? await keeper.validTokens(binding) : undefined;
    const tokens = candidate && !refused.has(candidate.access_token) ? candidate : undefined;
    const res = await sendWithTokens(parts, binding, tokens, original);

    // Defence in depth: whatever the servers answer, one call makes a bounded number of requests.
    if (round >= 4 + maxStepUps) return res;

    if (res.status === 401) {
      if (tokens) refused.add(tokens.access_token);
      const challenge = oauthChallenge(res);
      const fresh = await discoverBinding(context, server, challenge?.params.resource_metadata);
      const valid = await keeper.validTokens(fresh);
      if (valid && !refused.has(valid.access_token)) {
        await res.body?.cancel();
        continue; // valid tokens for this (issuer, resource) exist but were not sent: use them
      }
      const stored = await keeper.storedTokens(fresh);
      const known = stored && (await keeper.usable(stored, fresh)) ? stored : undefined;
      if (known?.refresh_token && !refreshed && !authorized) {
        refreshed = true;
        // Stale = the token the server refused: when another caller has already replaced it, the
        // newer token is used instead of redeeming the (rotated) refresh token once more.
        if (await keeper.refresh(fresh, tokens?.access_token ?? known.access_token)) {
          await res.body?.cancel();
          continue;
        }
      }
      if (authorized) return res;
      const scope = scopeToRequest(context, fresh, challenge?.params.scope);
      await res.body?.cancel();
      await authorizer.authorize(fresh, scope);
      authorized = true;
      continue;
    }

    if (res.status === 403 && binding && tokens) {
      const challenge = oauthChallenge(res);
      if (challenge?.params.error !== 'insufficient_scope') return res;
      const wanted = unionScope(tokens.requested_scope ?? tokens.scope, challenge.params.scope);
      const key = JSON.stringify([binding.resource, splitScope(wanted).sort()]);
      if (lastStepUpKey === key || (tokens.scope && scopeCovers(tokens.scope, wanted) && stepUps > 0)) {
        failedStepUps.add(key);
      }
      if (stepUps >= maxStepUps || failedStepUps.has(key)) return res;
      stepUps++;
      lastStepUpKey = key;
      context.emit({ type: 'step_up', resource: binding.resource, scope: wanted });
      await res.body?.cancel();
      // Refresh cannot widen scope (RFC 6749 §6): step-up always re-authorizes.
      let scope = wanted;
      if (context.wantRefresh && !context.machine && binding.as_metadata.scopes_supported?.includes('offline_access')) {
        scope = unionScope(scope, 'offline_access');
      }
      await authorizer.authorize(binding, scope);
      continue;
    }
    return res;
  }
}
