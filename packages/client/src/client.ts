import { ANY_ADDRESS, egressPolicyForPeer } from '@mcp-auth-kit/protocol';
import { ERR, McpAuthError } from './errors.js';
import {
  assertPkceS256,
  discoverAuthorizationServer,
  discoverProtectedResource,
  type ProtectedResourceMetadata,
} from './discovery.js';
import type { HttpDeps } from './http.js';
import { startLoopbackListener } from './loopback.js';
import {
  clientCredentialsGrant,
  codeChallengeS256,
  exchangeAuthorizationCode,
  generateCodeVerifier,
  generateState,
  jwtBearerGrant,
  refreshGrant,
  revokeToken,
  validateAuthorizationResponse,
  type GrantContext,
  type TokenEndpointResponse,
} from './oauth.js';
import { resolveClient } from './registration.js';
import { scopeCovers, selectScope, splitScope, unionScope } from './scope.js';
import { MemoryStore, tokenKey, type AuthStore, type ClientInformation, type ServerBinding, type StoredTokens } from './store.js';
import { assertAllowedUrl, serverKey } from './url.js';
import { assertClientBoundTo, boundClient, boundRecord } from './credential-binding.js';
import { oauthChallenge, type Challenge } from './www-authenticate.js';
import {
  assertValidOptions,
  type ClientCredentialsConfig,
  type JwtBearerConfig,
  type McpAuthClientOptions,
  type McpAuthEvent,
} from './client/options.js';
import { createDpopKey, createPersistableDpopKey, dpopAlgorithm, dpopKeyFromJwk, dpopResourceRequest, type DpopKey } from './dpop.js';

/** What {@link McpAuthClient.status} reports per server (no secrets). */
export interface ServerStatus {
  server: string;
  resource: string;
  issuer: string;
  client_id?: string | undefined;
  scope?: string | undefined;
  expires_at?: number | undefined;
  has_refresh_token: boolean;
  authenticated: boolean;
}

function nowSeconds() {
  return Math.floor(Date.now() / 1000);
}

function tokensFrom(
  res: TokenEndpointResponse,
  binding: ServerBinding,
  client: ClientInformation,
  requestedScope: string | undefined,
  previous?: StoredTokens,
  dpop?: DpopKey,
): StoredTokens {
  const scope = res.scope ?? requestedScope ?? previous?.scope;
  const refresh = res.refresh_token ?? previous?.refresh_token;
  return {
    issuer: binding.issuer,
    resource: binding.resource,
    access_token: res.access_token,
    token_type: res.token_type,
    client_id: client.client_id,
    ...(refresh !== undefined && { refresh_token: refresh }),
    ...(typeof res.expires_in === 'number' && { expires_at: nowSeconds() + res.expires_in }),
    ...(scope !== undefined && { scope }),
    ...((requestedScope ?? previous?.requested_scope) !== undefined && { requested_scope: requestedScope ?? previous?.requested_scope }),
    ...(res.token_type.toLowerCase() === 'dpop' && dpop && { dpop_jkt: dpop.jkt }),
  };
}

/**
 * An MCP authorization client: discovery (RFC 9728, RFC 8414/OIDC), registration (pre-registered,
 * CIMD, DCR), authorization code + PKCE with RFC 9207 `iss` validation, RFC 8707 `resource` on
 * every request, refresh with rotation, single-flight refresh and step-up.
 *
 * @example
 * const client = new McpAuthClient({ clientName: 'My host', openAuthorizationUrl: async (u) => open(u) });
 * const res = await client.fetch('https://mcp.example.com/mcp', { method: 'POST', body });
 */
export class McpAuthClient {
  readonly store: AuthStore;
  private readonly opts: McpAuthClientOptions;
  private readonly deps: HttpDeps;
  private readonly refreshing = new Map<string, Promise<StoredTokens | undefined>>();
  private readonly authorizing = new Map<string, Promise<StoredTokens>>();
  /** (resource, scope set) pairs whose step-up did not help: never retried in this client. */
  private readonly failedStepUps = new Set<string>();
  /** One DPoP key per (issuer, resource), loaded from the store when it keeps keys. */
  private readonly dpopKeys = new Map<string, Promise<DpopKey>>();

  constructor(options: McpAuthClientOptions) {
    assertValidOptions(options);
    this.opts = options;
    this.store = options.store ?? new MemoryStore();
    const baseFetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.deps = {
      fetch: baseFetch,
      ...(options.allowInsecureRequests && { allowInsecureRequests: true }),
    };
    this.fetch = this.fetch.bind(this);
  }

  private emit(event: McpAuthEvent) {
    try {
      this.opts.onEvent?.(event);
    } catch {
      // A faulty progress listener must not break authorization.
    }
  }

  /** The requests made for an MCP server, under the egress policy its URL earns (see `privateNetworks`). */
  private depsFor(server: string): HttpDeps {
    const mode = this.opts.blockPrivateNetworks ? 'block' : (this.opts.privateNetworks ?? 'auto');
    const egress = mode === 'allow' ? ANY_ADDRESS : egressPolicyForPeer(server, { blockLoopback: mode === 'block' });
    return { ...this.deps, egress };
  }

  private get wantRefresh() {
    return this.opts.refreshTokens !== false;
  }

  /** The non-interactive grant configured, if any. */
  private get machine(): ClientCredentialsConfig | JwtBearerConfig | undefined {
    return this.opts.jwtBearer ?? this.opts.clientCredentials;
  }

  /**
   * Discovers the PRM and AS metadata of an MCP server and records the binding. `resourceMetadata`
   * is the challenge's `resource_metadata` URL when there is one.
   */
  async discover(serverUrl: string | URL, resourceMetadata?: string): Promise<ServerBinding & { prm: ProtectedResourceMetadata }> {
    const server = serverKey(serverUrl);
    const deps = this.depsFor(server);
    let found: { metadata: ProtectedResourceMetadata; url?: URL };
    try {
      found = await discoverProtectedResource(server, deps, resourceMetadata);
    } catch (err) {
      if (!this.opts.legacyDiscovery || !(err instanceof McpAuthError) || err.code !== ERR.PRM_NOT_FOUND) throw err;
      // MCP 2025-03-26: no PRM; the server's origin is the authorization server ("authorization base URL").
      found = { metadata: { resource: server, authorization_servers: [new URL(server).origin] } };
    }
    const { metadata: prm, url } = found;
    // RFC 9728 §7.6: the client picks; an AS it holds credentials for comes first.
    const known = new Set([...(this.opts.preRegistered ?? []).map((p) => p.issuer), ...(this.machine ? [this.machine.issuer] : [])]);
    const issuer = prm.authorization_servers.find((s) => known.has(s)) ?? prm.authorization_servers[0]!;
    assertAllowedUrl(issuer, 'authorization server issuer', deps);
    const asMeta = await discoverAuthorizationServer(issuer, deps);
    const binding: ServerBinding = {
      server,
      resource: prm.resource,
      issuer,
      ...(url && { resource_metadata_url: url.href }),
      as_metadata: asMeta,
      ...(prm.scopes_supported && { scopes_supported: prm.scopes_supported }),
      ...(((Array.isArray(prm.dpop_signing_alg_values_supported) && prm.dpop_signing_alg_values_supported.length > 0) ||
        prm.dpop_bound_access_tokens_required === true) && { dpop_supported: true }),
    };
    const previous = await this.store.getServer(server);
    if (previous && previous.issuer !== issuer) {
      this.emit({ type: 'authorization_server_changed', server, from: previous.issuer, to: issuer });
    }
    await this.store.setServer(binding);
    this.emit({ type: 'discovered', server, resource: binding.resource, issuer });
    return { ...binding, prm };
  }

  /** A valid access token for the server, refreshing it when expired; undefined when none. */
  async getTokens(serverUrl: string | URL): Promise<StoredTokens | undefined> {
    const binding = await this.store.getServer(serverKey(serverUrl));
    return binding ? this.validTokens(binding) : undefined;
  }

  /** The stored tokens of a binding; a record of another (issuer, resource) is never used. */
  private async storedTokens(binding: ServerBinding): Promise<StoredTokens | undefined> {
    return boundRecord(await this.store.getTokens(binding.issuer, binding.resource), binding);
  }

  private async validTokens(binding: ServerBinding): Promise<StoredTokens | undefined> {
    const tokens = await this.storedTokens(binding);
    if (!tokens || !(await this.usable(tokens, binding))) return undefined;
    const skew = this.opts.expirySkewSeconds ?? 30;
    if (tokens.expires_at === undefined || tokens.expires_at - skew > nowSeconds()) return tokens;
    if (!tokens.refresh_token) return undefined;
    return this.refresh(binding, tokens.access_token);
  }

  /** DPoP-bound tokens are usable only with the key they are bound to (kept in memory). */
  private async usable(tokens: StoredTokens, binding: ServerBinding): Promise<boolean> {
    if (tokens.token_type.toLowerCase() !== 'dpop') return true;
    const key = await this.dpopKey(binding, tokens.client_id);
    return !!key && key.jkt === tokens.dpop_jkt;
  }

  private dpopKey(binding: ServerBinding, clientId: string): Promise<DpopKey | undefined> {
    const mode = this.opts.dpop ?? 'auto';
    if (mode === 'never' || (mode === 'auto' && !binding.dpop_supported)) return Promise.resolve(undefined);
    const alg = dpopAlgorithm(binding.as_metadata);
    if (!alg) return Promise.resolve(undefined);
    const id = JSON.stringify([binding.issuer, binding.resource]);
    let key = this.dpopKeys.get(id);
    if (!key) {
      key = this.loadOrCreateDpopKey(binding, alg, clientId);
      this.dpopKeys.set(id, key);
      key.catch(() => this.dpopKeys.delete(id));
    }
    return key;
  }

  /**
   * A store that keeps DPoP keys (the memory and file stores) lets DPoP-bound tokens survive the
   * process (the CLI logs in once, then calls in later processes); other stores get in-memory keys.
   */
  private async loadOrCreateDpopKey(binding: ServerBinding, alg: string, clientId: string): Promise<DpopKey> {
    const store = this.store;
    if (!store.getDpopKey || !store.setDpopKey) return createDpopKey(alg, clientId);
    const load = async () => {
      const stored = boundRecord(await store.getDpopKey!(binding.issuer, binding.resource), binding);
      if (stored && stored.alg === alg) {
        try {
          return await dpopKeyFromJwk(stored.alg, stored.private_jwk, clientId);
        } catch {
          // unreadable key: replaced below; tokens bound to it are then re-obtained
        }
      }
      const fresh = await createPersistableDpopKey(alg, clientId, binding.issuer, binding.resource);
      await store.setDpopKey!(fresh.stored);
      return fresh.key;
    };
    // two processes must not both create a key for the same pair (the loser's tokens would be unusable)
    return store.withLock ? store.withLock(load) : load();
  }

  /**
   * Refreshes the tokens of a binding. Concurrent callers share one refresh (single flight), so a
   * rotating refresh token is redeemed once. Returns undefined when refresh is impossible or
   * refused (the stale tokens are then dropped).
   */
  async refresh(binding: ServerBinding, staleAccessToken?: string): Promise<StoredTokens | undefined> {
    const key = tokenKey(binding.issuer, binding.resource);
    const pending = this.refreshing.get(key);
    if (pending) return pending;
    const attempt = async (): Promise<StoredTokens | undefined> => {
      const current = await this.storedTokens(binding);
      if (!current) return undefined;
      // Someone else already refreshed (another caller or process): use the newer token.
      if (staleAccessToken && current.access_token !== staleAccessToken) return current;
      if (!current.refresh_token || !(await this.usable(current, binding))) return undefined;
      const client = await this.clientFor(binding);
      if (!client || client.client_id !== current.client_id) return undefined;
      try {
        const ctx = await this.grantContext(binding, client);
        const res = await refreshGrant(ctx, current.refresh_token, binding.resource);
        const next = tokensFrom(res, binding, client, current.requested_scope, current, ctx.dpopKey);
        await this.store.setTokens(next);
        this.emit({ type: 'refreshed', issuer: binding.issuer, resource: binding.resource });
        return next;
      } catch (err) {
        if (err instanceof McpAuthError && err.code === ERR.TOKEN_REQUEST_FAILED && err.error) {
          // invalid_grant & co: the refresh token is dead; a new authorization is needed.
          await this.store.deleteTokens(binding.issuer, binding.resource);
          return undefined;
        }
        throw err;
      }
    };
    // Cross-process single flight when the store offers a lock (the file store does).
    const run = this.store.withLock ? this.store.withLock(attempt) : attempt();
    this.refreshing.set(key, run);
    try {
      return await run;
    } finally {
      this.refreshing.delete(key);
    }
  }

  private async clientFor(binding: ServerBinding): Promise<ClientInformation | undefined> {
    if (this.machine) return this.ccClient(binding);
    const pre = this.opts.preRegistered?.find((p) => p.issuer === binding.issuer);
    if (pre) return { ...pre, source: 'pre-registered' };
    return boundClient(await this.store.getClient(binding.issuer), binding.issuer);
  }

  private ccClient(binding: ServerBinding): ClientInformation {
    const cc = this.machine!;
    if (cc.issuer !== binding.issuer) {
      throw new McpAuthError(
        ERR.AS_MISMATCH,
        `client credentials are for ${cc.issuer}, but the MCP server uses the authorization server ${binding.issuer}`,
      );
    }
    const method = cc.token_endpoint_auth_method ?? (cc.privateKey ? 'private_key_jwt' : cc.client_secret ? 'client_secret_basic' : 'none');
    return {
      issuer: binding.issuer,
      client_id: cc.client_id,
      ...(cc.client_secret !== undefined && { client_secret: cc.client_secret }),
      token_endpoint_auth_method: method,
      source: 'pre-registered',
    };
  }

  /**
   * Everything a token or revocation request is built from. Every credential-bearing request goes
   * through here: the client, the binding and the AS metadata must name one issuer, and a key is
   * taken only from configuration bound to that issuer.
   */
  private async grantContext(binding: ServerBinding, client: ClientInformation): Promise<GrantContext & { dpopKey?: DpopKey | undefined }> {
    assertClientBoundTo(binding, client);
    const machine = this.machine;
    const privateKey =
      machine && machine.issuer === binding.issuer && machine.client_id === client.client_id
        ? machine.privateKey
        : this.opts.preRegistered?.find((p) => p.issuer === binding.issuer && p.client_id === client.client_id)?.privateKey;
    const dpopKey = await this.dpopKey(binding, client.client_id);
    return { as: binding.as_metadata, client, privateKey, deps: this.depsFor(binding.server), dpop: dpopKey?.handle, dpopKey };
  }

  /**
   * Runs a full authorization for an MCP server (discovery when needed, registration, browser
   * flow or client credentials grant) and stores the tokens. Concurrent calls for the same server
   * and scope share one flow.
   */
  async authorize(serverUrl: string | URL, options: { scope?: string; challenge?: Challenge } = {}): Promise<StoredTokens> {
    const binding = await this.discover(serverUrl, options.challenge?.params.resource_metadata);
    const scope =
      options.scope ??
      selectScope({
        challengeScope: options.challenge?.params.scope,
        scopesSupported: binding.prm.scopes_supported,
        asScopesSupported: binding.as_metadata.scopes_supported,
        wantRefreshToken: this.wantRefresh && !this.machine,
      });
    return this.authorizeBinding(binding, scope);
  }

  private authorizeBinding(binding: ServerBinding, scope: string | undefined): Promise<StoredTokens> {
    const key = JSON.stringify([binding.issuer, binding.resource, splitScope(scope).sort()]);
    const pending = this.authorizing.get(key);
    if (pending) return pending;
    const run = this.machine ? this.machineFlow(binding, scope) : this.authorizationCodeFlow(binding, scope);
    this.authorizing.set(key, run);
    return run.finally(() => this.authorizing.delete(key));
  }

  /** Client credentials or JWT bearer grant: no user, no browser. Errors are final (no fallback grant). */
  private async machineFlow(binding: ServerBinding, scope: string | undefined): Promise<StoredTokens> {
    const client = this.ccClient(binding);
    const requested = scope ?? this.machine?.scope;
    const jb = this.opts.jwtBearer;
    const ctx = await this.grantContext(binding, client);
    const res = jb
      ? await jwtBearerGrant(
          ctx,
          await jb.assertion({ issuer: binding.issuer, resource: binding.resource, scope: requested }),
          binding.resource,
          requested,
        )
      : await clientCredentialsGrant(ctx, binding.resource, requested);
    const tokens = tokensFrom(res, binding, client, requested, undefined, ctx.dpopKey);
    await this.store.setTokens(tokens);
    this.emit({ type: 'authorized', issuer: binding.issuer, resource: binding.resource, scope: tokens.scope });
    return tokens;
  }

  private async authorizationCodeFlow(binding: ServerBinding, scope: string | undefined): Promise<StoredTokens> {
    const as = binding.as_metadata;
    assertPkceS256(as);
    if (!as.authorization_endpoint) {
      throw new McpAuthError(ERR.AS_METADATA_INVALID, `authorization server ${as.issuer} has no authorization_endpoint`);
    }
    const open = this.opts.openAuthorizationUrl;
    if (!open) {
      throw new McpAuthError(ERR.INTERACTION_REQUIRED, 'authorization requires a user, but no openAuthorizationUrl callback is configured');
    }
    const stored = boundClient(await this.store.getClient(as.issuer), as.issuer);
    const listener = await this.listen(stored);
    try {
      const client = await resolveClient(
        {
          clientName: this.opts.clientName,
          preRegistered: this.opts.preRegistered,
          clientMetadataUrl: this.opts.clientMetadataUrl,
          clientMetadata: this.opts.clientMetadata,
          applicationType: this.opts.applicationType,
          wantRefreshToken: this.wantRefresh,
          onRegistrationNeeded: this.opts.onRegistrationNeeded,
        },
        { as, redirectUri: listener.redirectUri },
        stored,
        this.depsFor(binding.server),
      );
      if (client.source !== 'pre-registered' && (stored?.client_id !== client.client_id || stored.issuer !== client.issuer)) {
        await this.store.setClient(client);
        this.emit({ type: 'registered', issuer: as.issuer, client_id: client.client_id, source: client.source });
      }
      const verifier = generateCodeVerifier();
      const state = generateState();
      const url = new URL(as.authorization_endpoint);
      url.searchParams.set('response_type', 'code');
      url.searchParams.set('client_id', client.client_id);
      url.searchParams.set('redirect_uri', listener.redirectUri);
      url.searchParams.set('code_challenge', await codeChallengeS256(verifier));
      url.searchParams.set('code_challenge_method', 'S256');
      url.searchParams.set('state', state);
      url.searchParams.set('resource', binding.resource);
      if (scope) url.searchParams.set('scope', scope);
      // OIDC Core §11: offline_access is only honoured together with prompt=consent.
      if (splitScope(scope).includes('offline_access')) url.searchParams.set('prompt', 'consent');
      const ctx = await this.grantContext(binding, client);
      // RFC 9449 §10: bind the authorization code to the DPoP key.
      if (ctx.dpopKey) url.searchParams.set('dpop_jkt', ctx.dpopKey.jkt);
      // Security Best Practices: only http(s) authorization URLs are ever opened.
      assertAllowedUrl(url, 'authorization URL', this.deps);
      this.emit({ type: 'authorization_url', url });
      const callback = listener.waitForCallback({ state, timeoutMs: this.opts.authorizationTimeoutMs ?? 300_000 });
      callback.catch(() => undefined);
      await open(url);
      this.emit({ type: 'waiting_for_callback', redirectUri: listener.redirectUri });
      const response = await callback;
      // The issuer recorded with the verifier and state is the validated metadata's issuer.
      const params = validateAuthorizationResponse(as, client.client_id, response, state);
      const res = await exchangeAuthorizationCode(ctx, params, listener.redirectUri, verifier, binding.resource);
      const tokens = tokensFrom(res, binding, client, scope, undefined, ctx.dpopKey);
      await this.store.setTokens(tokens);
      this.emit({ type: 'authorized', issuer: binding.issuer, resource: binding.resource, scope: tokens.scope });
      return tokens;
    } finally {
      await listener.close();
    }
  }

  private async listen(stored: ClientInformation | undefined) {
    const base = this.opts.loopback ?? {};
    // Reuse the port registered by DCR so the exact registered redirect URI keeps working.
    if (stored?.redirect_uri && base.port === undefined) {
      try {
        const port = Number(new URL(stored.redirect_uri).port);
        if (port) return await startLoopbackListener({ ...base, port });
      } catch {
        // Port taken: fall back to an ephemeral one (RFC 8252 §7.3 lets loopback ports vary).
      }
    }
    return startLoopbackListener(base);
  }

  /**
   * fetch with MCP authorization: attaches the bound access token, refreshes it when expired or
   * on 401 `invalid_token`, runs discovery + authorization on 401, steps up on 403
   * `insufficient_scope` with the scope union (bounded retries), and retries the request.
   * The final response is returned as is (e.g. a 403 when step-up is exhausted).
   */
  async fetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
    const original = new Request(input, init);
    const server = serverKey(original.url);
    const maxStepUps = this.opts.maxStepUpAttempts ?? 2;
    let refreshed = false;
    let authorized = false;
    let stepUps = 0;
    let lastStepUpKey: string | undefined;
    /** Access tokens the server refused during this call: never sent again (guarantees termination). */
    const refused = new Set<string>();
    for (let round = 0; ; round++) {
      const binding = await this.store.getServer(server);
      const candidate = binding ? await this.validTokens(binding) : undefined;
      const tokens = candidate && !refused.has(candidate.access_token) ? candidate : undefined;
      let res: Response;
      const dpopKey = tokens?.dpop_jkt && binding ? await this.dpopKey(binding, tokens.client_id) : undefined;
      if (tokens && dpopKey) {
        res = await dpopResourceRequest(original, tokens.access_token, dpopKey, this.deps);
      } else {
        const headers = new Headers(original.headers);
        if (tokens) headers.set('authorization', `Bearer ${tokens.access_token}`);
        res = await this.deps.fetch(new Request(original.clone(), { headers }));
      }

      // Defence in depth: whatever the servers answer, one call makes a bounded number of requests.
      if (round >= 4 + maxStepUps) return res;

      if (res.status === 401) {
        if (tokens) refused.add(tokens.access_token);
        const challenge = oauthChallenge(res);
        const fresh = await this.discover(server, challenge?.params.resource_metadata);
        const valid = await this.validTokens(fresh);
        if (valid && !refused.has(valid.access_token)) {
          await res.body?.cancel();
          continue; // valid tokens for this (issuer, resource) exist but were not sent: use them
        }
        const stored = await this.storedTokens(fresh);
        const known = stored && (await this.usable(stored, fresh)) ? stored : undefined;
        if (known?.refresh_token && !refreshed && !authorized) {
          refreshed = true;
          // Stale = the token the server refused: when another caller has already replaced it, the
          // newer token is used instead of redeeming the (rotated) refresh token once more.
          if (await this.refresh(fresh, tokens?.access_token ?? known.access_token)) {
            await res.body?.cancel();
            continue;
          }
        }
        if (authorized) return res;
        const scope = selectScope({
          challengeScope: challenge?.params.scope,
          scopesSupported: fresh.prm.scopes_supported,
          asScopesSupported: fresh.as_metadata.scopes_supported,
          wantRefreshToken: this.wantRefresh && !this.machine,
        });
        await res.body?.cancel();
        await this.authorizeBinding(fresh, scope);
        authorized = true;
        continue;
      }

      if (res.status === 403 && binding && tokens) {
        const challenge = oauthChallenge(res);
        if (challenge?.params.error !== 'insufficient_scope') return res;
        const wanted = unionScope(tokens.requested_scope ?? tokens.scope, challenge.params.scope);
        const key = JSON.stringify([binding.resource, splitScope(wanted).sort()]);
        if (lastStepUpKey === key || (tokens.scope && scopeCovers(tokens.scope, wanted) && stepUps > 0)) {
          this.failedStepUps.add(key);
        }
        if (stepUps >= maxStepUps || this.failedStepUps.has(key)) return res;
        stepUps++;
        lastStepUpKey = key;
        this.emit({ type: 'step_up', resource: binding.resource, scope: wanted });
        await res.body?.cancel();
        // Refresh cannot widen scope (RFC 6749 §6): step-up always re-authorizes.
        let scope = wanted;
        if (this.wantRefresh && !this.machine && binding.as_metadata.scopes_supported?.includes('offline_access')) {
          scope = unionScope(scope, 'offline_access');
        }
        await this.authorizeBinding(binding, scope);
        continue;
      }
      return res;
    }
  }

  /**
   * Reacts to a 401 from an MCP server outside {@link fetch} (e.g. from an SDK `authProvider`):
   * rediscovers from the challenge, refreshes when the stored token was the one refused and a
   * refresh token exists, otherwise runs a new authorization. Resolves with the new tokens.
   */
  async handleUnauthorized(serverUrl: string | URL, response: Response): Promise<StoredTokens> {
    const challenge = oauthChallenge(response);
    const fresh = await this.discover(serverUrl, challenge?.params.resource_metadata);
    const stored = await this.storedTokens(fresh);
    if (stored?.refresh_token && (await this.usable(stored, fresh))) {
      const refreshed = await this.refresh(fresh, stored.access_token);
      if (refreshed && refreshed.access_token !== stored.access_token) return refreshed;
    }
    const scope = selectScope({
      challengeScope: challenge?.params.scope,
      scopesSupported: fresh.prm.scopes_supported,
      asScopesSupported: fresh.as_metadata.scopes_supported,
      wantRefreshToken: this.wantRefresh && !this.machine,
    });
    return this.authorizeBinding(fresh, scope);
  }

  /**
   * Forgets tokens (and the discovery binding) of one server, or of every server, after revoking
   * them at the AS when it has a `revocation_endpoint` (RFC 7009, best effort).
   */
  async logout(serverUrl?: string | URL): Promise<void> {
    const bindings = serverUrl
      ? [await this.store.getServer(serverKey(serverUrl))].filter((b): b is ServerBinding => !!b)
      : await this.store.listServers();
    for (const b of bindings) {
      const tokens = await this.storedTokens(b);
      const client = tokens && (await this.clientFor(b).catch(() => undefined));
      if (tokens && client && client.client_id === tokens.client_id) {
        // RFC 7009: revoking the refresh token ends the grant at the AS (best effort). A binding
        // whose records disagree on the issuer is not revoked, only forgotten.
        const ctx = await this.grantContext(b, client).catch(() => undefined);
        if (ctx && tokens.refresh_token) await revokeToken(ctx, tokens.refresh_token, 'refresh_token');
        else if (ctx) await revokeToken(ctx, tokens.access_token, 'access_token');
      }
      await this.store.deleteTokens(b.issuer, b.resource);
      // a new login gets a new DPoP key
      await this.store.deleteDpopKey?.(b.issuer, b.resource);
      this.dpopKeys.delete(JSON.stringify([b.issuer, b.resource]));
      await this.store.deleteServer(b.server);
    }
  }

  /** What the store knows, without secrets. */
  async status(): Promise<ServerStatus[]> {
    const out: ServerStatus[] = [];
    for (const b of await this.store.listServers()) {
      const t = await this.storedTokens(b);
      out.push({
        server: b.server,
        resource: b.resource,
        issuer: b.issuer,
        client_id: t?.client_id,
        scope: t?.scope,
        expires_at: t?.expires_at,
        has_refresh_token: !!t?.refresh_token,
        authenticated: !!t && (t.expires_at === undefined || t.expires_at > nowSeconds() || !!t.refresh_token),
      });
    }
    return out;
  }
}
