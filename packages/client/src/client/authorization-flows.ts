import { pkceChallengeS256 } from '@mcp-auth-kit/protocol';
import { boundClient } from '../credential-binding.js';
import { assertPkceS256 } from '../discovery.js';
import { ERR, McpAuthError } from '../errors.js';
import { startLoopbackListener } from '../loopback.js';
import {
  clientCredentialsGrant,
  exchangeAuthorizationCode,
  generateCodeVerifier,
  generateState,
  jwtBearerGrant,
  validateAuthorizationResponse,
} from '../oauth.js';
import { resolveClient } from '../registration.js';
import { signClientAssertion } from '../client-assertion.js';
import { splitScope } from '../scope.js';
import type { ClientInformation, ServerBinding, StoredTokens } from '../store.js';
import { assertAllowedUrl } from '../url.js';
import type { ClientContext } from './context.js';
import { grantContext, machineClient } from './credentials.js';
import type { DpopKeys } from './dpop-keys.js';
import { tokensFrom } from './tokens.js';

/**
 * New tokens for a binding: the authorization code flow with PKCE through the user's browser, or
 * the client credentials / JWT bearer grant when one is configured.
 */
export class Authorizer {
  private readonly context: ClientContext;
  private readonly dpopKeys: DpopKeys;
  private readonly authorizing = new Map<string, Promise<StoredTokens>>();

  constructor(context: ClientContext, dpopKeys: DpopKeys) {
    this.context = context;
    this.dpopKeys = dpopKeys;
  }

  /** Runs a new authorization for a binding and stores the tokens; concurrent calls for the same (issuer, resource, scope) share one flow. */
  authorize(binding: ServerBinding, scope: string | undefined): Promise<StoredTokens> {
    const key = JSON.stringify([binding.issuer, binding.resource, splitScope(scope).sort()]);
    const pending = this.authorizing.get(key);
    if (pending) return pending;
    const run = this.context.machine ? this.machineFlow(binding, scope) : this.authorizationCodeFlow(binding, scope);
    this.authorizing.set(key, run);
    return run.finally(() => this.authorizing.delete(key));
  }

  /** Client credentials or JWT bearer grant: no user, no browser. Errors are final (no fallback grant). */
  private async machineFlow(binding: ServerBinding, scope: string | undefined): Promise<StoredTokens> {
    const client = machineClient(this.context, binding);
    const requested = scope ?? this.context.machine?.scope;
    const ctx = await this.grantContext(binding, client);
    const assertion = await this.machineAssertion(binding, requested);
    const res =
      assertion !== undefined
        ? await jwtBearerGrant(ctx, assertion, binding.resource, requested)
        : await clientCredentialsGrant(ctx, binding.resource, requested);
    return this.keep(binding, tokensFrom(res, binding, client, requested, undefined, ctx.dpopKey));
  }

  /**
   * The RFC 7523 §2.1 assertion of a machine flow: the configured JWT bearer grant's (an ID-JAG, a
   * workload identity), or one this client signs for the client credentials extension's assertion
   * grant; `undefined` for the client credentials grant.
   */
  private async machineAssertion(binding: ServerBinding, scope: string | undefined): Promise<string | undefined> {
    const { jwtBearer, clientCredentials } = this.context.opts;
    if (jwtBearer) return jwtBearer.assertion({ issuer: binding.issuer, resource: binding.resource, scope });
    if (clientCredentials?.grant === 'jwt_bearer' && clientCredentials.privateKey) {
      return signClientAssertion(clientCredentials.client_id, binding.issuer, clientCredentials.privateKey);
    }
    return undefined;
  }

  private async authorizationCodeFlow(binding: ServerBinding, scope: string | undefined): Promise<StoredTokens> {
    const { opts, store } = this.context;
    const as = binding.as_metadata;
    assertPkceS256(as);
    if (!as.authorization_endpoint) {
      throw new McpAuthError(ERR.AS_METADATA_INVALID, `authorization server ${as.issuer} has no authorization_endpoint`);
    }
    const open = opts.openAuthorizationUrl;
    if (!open) {
      throw new McpAuthError(ERR.INTERACTION_REQUIRED, 'authorization requires a user, but no openAuthorizationUrl callback is configured');
    }
    const stored = boundClient(await store.getClient(as.issuer), as.issuer);
    const listener = await this.listen(stored);
    try {
      const client = await resolveClient(
        {
          clientName: opts.clientName,
          preRegistered: opts.preRegistered,
          clientMetadataUrl: opts.clientMetadataUrl,
          clientMetadata: opts.clientMetadata,
          applicationType: opts.applicationType,
          wantRefreshToken: this.context.wantRefresh,
          onRegistrationNeeded: opts.onRegistrationNeeded,
        },
        { as, redirectUri: listener.redirectUri },
        stored,
        this.context.depsFor(binding.server),
      );
      if (client.source !== 'pre-registered' && (stored?.client_id !== client.client_id || stored.issuer !== client.issuer)) {
        await store.setClient(client);
        this.context.emit({ type: 'registered', issuer: as.issuer, client_id: client.client_id, source: client.source });
      }
      const verifier = generateCodeVerifier();
      const state = generateState();
      const url = new URL(as.authorization_endpoint);
      url.searchParams.set('response_type', 'code');
      url.searchParams.set('client_id', client.client_id);
      url.searchParams.set('redirect_uri', listener.redirectUri);
      url.searchParams.set('code_challenge', pkceChallengeS256(verifier));
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
      assertAllowedUrl(url, 'authorization URL', this.context.deps);
      this.context.emit({ type: 'authorization_url', url });
      const callback = listener.waitForCallback({ state, issuer: as.issuer, timeoutMs: opts.authorizationTimeoutMs });
      callback.catch(() => undefined);
      await open(url);
      this.context.emit({ type: 'waiting_for_callback', redirectUri: listener.redirectUri });
      const response = await callback;
      // The issuer recorded with the verifier and state is the validated metadata's issuer.
      const params = validateAuthorizationResponse(as, client.client_id, response, state);
      const res = await exchangeAuthorizationCode(ctx, params, listener.redirectUri, verifier, binding.resource);
      return await this.keep(binding, tokensFrom(res, binding, client, scope, undefined, ctx.dpopKey));
    } finally {
      await listener.close();
    }
  }

  /** Stores the tokens a grant returned and announces them (the `authorized` event). */
  private async keep(binding: ServerBinding, tokens: StoredTokens): Promise<StoredTokens> {
    await this.context.store.setTokens(tokens);
    this.context.emit({
      type: 'authorized',
      issuer: binding.issuer,
      resource: binding.resource,
      scope: tokens.scope,
      account: tokens.account,
    });
    return tokens;
  }

  private async listen(stored: ClientInformation | undefined) {
    const base = this.context.opts.loopback;
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

  private grantContext(binding: ServerBinding, client: ClientInformation) {
    return grantContext(this.context, this.dpopKeys, binding, client);
  }
}
