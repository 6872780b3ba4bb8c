/**
 * Sign-in through an upstream OpenID Connect provider: authorization code + PKCE (S256) with
 * `state` and `nonce`, via openid-client. The upstream (`iss`, `sub`) pair is mapped to a
 * local account; an unknown identity gets an account only when the provider allows signup.
 * Never links by username or e-mail (a provider could assert any of those). A signed-up account
 * records its origin (`upstream:<issuer>`), so no other source ever adopts it by its name; its
 * username is a claim only if already canonical and display-safe, and an e-mail-like one only
 * when the provider verified that e-mail (else a name derived from the provider), its display name the `name` claim made display-safe.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import * as oidc from 'openid-client';
import { displaySafeText } from '@mcp-auth-kit/protocol';
import { upstreamSource } from '../accounts/account-origin.js';
import { upstreamNameCandidates, usernameChoices } from '../accounts/account-names.js';
import type { AccountRecord, Store } from '../storage/types.js';
import type { Logger } from '../ops/logger.js';
import { StorageError } from '../storage/errors.js';
import type { ResolvedConfig } from '../config/types.js';

type UpstreamProviderConfig = ResolvedConfig['upstream'][number];
import { createEgressFetch, upstreamEgressPolicy, type EgressFetch } from '../http/egress.js';

const FLOWS = 'upstream-flow';
const FLOW_TTL = 600;

interface PendingFlow {
  uid: string;
  provider: number;
  verifier: string;
  state: string;
  nonce: string;
}

export type UpstreamResult =
  | { ok: true; uid: string; provider: string; account: AccountRecord; created: boolean }
  | { ok: false; uid?: string; provider?: string; reason: 'unknown-flow' | 'upstream-error' | 'no-account' | 'disabled'; detail?: string };

export interface UpstreamLoginOptions {
  store: Store;
  logger: Logger;
  /** The AS callback registered at every upstream provider. */
  redirectUri: string;
}

export class UpstreamLogin {
  private readonly configs = new Map<number, Promise<oidc.Configuration>>();
  private readonly fetches = new Map<number, EgressFetch>();
  /** Origins of the discovered authorization endpoints (the login page's CSP form-action). */
  private readonly endpointOrigins = new Set<string>();

  constructor(
    readonly providers: readonly UpstreamProviderConfig[],
    private readonly o: UpstreamLoginOptions,
  ) {}

  /** One egress fetch (and connection pool) per provider, kept across discovery retries. */
  private egressFetch(index: number): EgressFetch {
    let egress = this.fetches.get(index);
    if (!egress) {
      const p = this.providers[index]!;
      egress = createEgressFetch({
        policy: upstreamEgressPolicy(p.issuer, p.allowPrivateNetwork),
        logger: this.o.logger,
        purpose: `upstream:${p.name}`,
      });
      this.fetches.set(index, egress);
    }
    return egress;
  }

  /** Discovery once per provider; a failure is not cached, so the next click tries again. */
  private configuration(index: number): Promise<oidc.Configuration> {
    let pending = this.configs.get(index);
    if (!pending) {
      const p = this.providers[index]!;
      const issuer = new URL(p.issuer);
      // Discovery, JWKS, token and userinfo requests of this configuration all use this fetch.
      const egressFetch = this.egressFetch(index);
      pending = oidc.discovery(
        issuer,
        p.clientId,
        p.clientSecret ? { client_secret: p.clientSecret } : undefined,
        p.clientSecret ? oidc.ClientSecretBasic(p.clientSecret) : oidc.None(),
        // Validated at start-up: plain http only for a loopback provider on a loopback AS.
        // A short timeout: the user is waiting on the login page.
        {
          timeout: 10,
          [oidc.customFetch]: (url, options) => egressFetch(url, options as RequestInit),
          ...(issuer.protocol === 'http:' ? { execute: [oidc.allowInsecureRequests] } : {}),
        },
      );
      pending.then(
        (config) => {
          const endpoint = config.serverMetadata().authorization_endpoint;
          if (endpoint) this.endpointOrigins.add(new URL(endpoint).origin);
        },
        () => this.configs.delete(index),
      );
      this.configs.set(index, pending);
    }
    return pending;
  }

  /** Discovers every provider ahead of the first click (failures are retried on use). */
  warm(): void {
    this.providers.forEach((_p, i) => void this.configuration(i).catch(() => undefined));
  }

  /** Issuer origins plus discovered authorization endpoint origins. */
  formOrigins(): string[] {
    return [...new Set([...this.providers.map((p) => new URL(p.issuer).origin), ...this.endpointOrigins])];
  }

  /** Starts a sign-in: returns the upstream authorization URL and the flow handle for the browser cookie. */
  async start(index: number, uid: string): Promise<{ url: string; handle: string }> {
    const p = this.providers[index];
    if (!p) throw new Error('unknown upstream provider');
    const config = await this.configuration(index);
    const flow: PendingFlow = {
      uid,
      provider: index,
      verifier: oidc.randomPKCECodeVerifier(),
      state: oidc.randomState(),
      nonce: oidc.randomNonce(),
    };
    const handle = randomBytes(24).toString('base64url');
    await this.o.store.kv.set(FLOWS, handle, flow, FLOW_TTL);
    const scopes = new Set(['openid', ...p.scopes]);
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: this.o.redirectUri,
      scope: [...scopes].join(' '),
      code_challenge: await oidc.calculatePKCECodeChallenge(flow.verifier),
      code_challenge_method: 'S256',
      state: flow.state,
      nonce: flow.nonce,
    });
    return { url: url.href, handle };
  }

  /** Finishes a sign-in from the callback's query string; the flow is single-use. */
  async complete(handle: string | undefined, query: string): Promise<UpstreamResult> {
    if (!handle) return { ok: false, reason: 'unknown-flow' };
    const flow = await this.o.store.kv.get<PendingFlow>(FLOWS, handle);
    if (!flow) return { ok: false, reason: 'unknown-flow' };
    await this.o.store.kv.delete(FLOWS, handle);
    const p = this.providers[flow.provider];
    if (!p) return { ok: false, uid: flow.uid, reason: 'unknown-flow' };

    let iss: string;
    let sub: string;
    let claims: Record<string, unknown>;
    try {
      const config = await this.configuration(flow.provider);
      const current = new URL(this.o.redirectUri);
      current.search = query;
      const tokens = await oidc.authorizationCodeGrant(config, current, {
        pkceCodeVerifier: flow.verifier,
        expectedState: flow.state,
        expectedNonce: flow.nonce,
        idTokenExpected: true,
      });
      claims = (tokens.claims() ?? {}) as Record<string, unknown>;
      iss = String(claims.iss);
      sub = String(claims.sub);
    } catch (err) {
      const e = err as { code?: string; error?: string; message: string };
      return { ok: false, uid: flow.uid, provider: p.name, reason: 'upstream-error', detail: e.error ?? e.code ?? e.message };
    }

    const existing = await this.o.store.accounts.findByUpstreamIdentity(iss, sub);
    if (existing) {
      if (existing.disabled) return { ok: false, uid: flow.uid, provider: p.name, reason: 'disabled' };
      return { ok: true, uid: flow.uid, provider: p.name, account: existing, created: false };
    }
    if (!p.allowSignup) return { ok: false, uid: flow.uid, provider: p.name, reason: 'no-account' };
    const account = await this.createAccount(p, iss, sub, claims);
    return { ok: true, uid: flow.uid, provider: p.name, account, created: true };
  }

  private async createAccount(
    p: UpstreamProviderConfig,
    iss: string,
    sub: string,
    claims: Record<string, unknown>,
  ): Promise<AccountRecord> {
    const suffix = createHash('sha256').update(`${iss} ${sub}`).digest('base64url').slice(0, 8);
    const candidates = [...upstreamNameCandidates(claims), `${p.name}-${sub}`, `${p.name}-${suffix}`, `upstream-${suffix}`];
    // A local name already taken is never linked: the upstream user gets a distinct username.
    for (const username of usernameChoices(candidates, [suffix, randomUUID().slice(0, 8)])) {
      if (await this.o.store.accounts.findByUsername(username)) continue;
      try {
        return await this.o.store.accounts.create({
          id: randomUUID(),
          username,
          passwordHash: null,
          displayName: displaySafeText(claims.name),
          disabled: false,
          upstreamIdentities: [`${iss} ${sub}`],
          source: upstreamSource(iss),
        });
      } catch (err) {
        if (!(err instanceof StorageError && err.code === 'conflict')) throw err;
      }
    }
    throw new Error('could not choose a username for the upstream account');
  }
}
