/**
 * Third-party authorization on this AS, as one object the token exchange, the connect pages and
 * the account page share: the providers (providers.ts), the vault (vault.ts), the connect records
 * (tickets.ts), and the rules between them — which configured client is which MCP server, when a
 * provider token is refreshed (under a lock, so concurrent exchanges refresh once: a second use
 * of a rotated refresh token would end the user's grant at the provider), when a connection ends.
 */
import { audit } from '../ops/audit.js';
import type { ResolvedConfig } from '../config/types.js';
import { withKvLock } from '../storage/kv-lock.js';
import type { Logger } from '../ops/logger.js';
import { decodeKey32 } from '../config/secret-key.js';
import type { Store } from '../storage/types.js';
import { derivedVaultKey, vaultKey, type VaultKey } from './seal.js';
import { EXPIRY_MARGIN_SECONDS, ProviderError, ThirdPartyProviders, type ResolvedProvider } from './providers.js';
import { ConnectRecords } from './tickets.js';
import { TokenVault, type OpenConnection, type ProviderTokens } from './vault.js';

const REFRESH_LOCKS = 'connection-refresh-lock';

/** Why a connection cannot give a token: the user must connect (again). */
export type ConnectReason = 'not_connected' | 'unreadable' | 'expired' | 'refresh_refused' | 'disconnected';

export type FreshTokens = { ok: true; tokens: ProviderTokens; refreshed: boolean } | { ok: false; reason: ConnectReason };

/** The provider could not be reached or answered nonsense while refreshing: retry later. */
export class ProviderUnavailable extends Error {
  constructor(readonly cause: ProviderError) {
    super(`the provider could not refresh the token (${cause.error})`);
    this.name = 'ProviderUnavailable';
  }
}

const now = () => Math.floor(Date.now() / 1000);
const expired = (t: ProviderTokens) => t.expiresAt !== undefined && t.expiresAt - EXPIRY_MARGIN_SECONDS <= now();

/** The vault's keys: the operator's (current first), else one per cookie key of the store (development). */
async function vaultKeys(config: NonNullable<ResolvedConfig['thirdParty']>, store: Store, logger: Logger): Promise<VaultKey[]> {
  if (config.encryptionKey) return [config.encryptionKey, ...config.previousEncryptionKeys].map((k) => vaultKey(decodeKey32(k)!));
  logger.warn(
    'thirdParty.encryptionKey is not set: provider tokens are encrypted with a key derived from the store’s cookie keys (development only; production refuses to start without a key)',
  );
  return (await store.keys.cookieKeys()).map(derivedVaultKey);
}

export class ThirdParty {
  readonly records: ConnectRecords;
  /** Configured clients that are MCP servers: client id → their `resource`. */
  readonly clientResources: ReadonlyMap<string, string>;

  constructor(
    readonly config: NonNullable<ResolvedConfig['thirdParty']>,
    readonly providers: ThirdPartyProviders,
    readonly vault: TokenVault,
    private readonly store: Store,
    private readonly logger: Logger,
    clients: ResolvedConfig['clients'],
  ) {
    this.records = new ConnectRecords(store.kv, config.connectTicketTTL);
    this.clientResources = new Map(clients.filter((c) => typeof c.resource === 'string').map((c) => [c.client_id, c.resource as string]));
  }

  /** Ends a connection that can no longer give a token (audited; nothing revoked: it is dead already). */
  private async end(sub: string, provider: string, reason: ConnectReason): Promise<FreshTokens> {
    if (await this.vault.remove(sub, provider)) audit(this.logger, 'third_party.disconnected', { account: sub, provider, reason });
    return { ok: false, reason };
  }

  /**
   * The user's token for the provider, refreshed first when it has expired (RFC 6749 §6). The
   * refresh runs alone per connection (kv-lock.ts) and writes only over the version it read, so
   * a disconnect in between is never undone. The provider refusing the refresh (`invalid_grant`:
   * revoked, expired, reused) ends the connection, and the user is asked to connect again.
   */
  async freshTokens(sub: string, p: ResolvedProvider): Promise<FreshTokens> {
    const open = await this.vault.open(sub, p.name);
    if (open === 'none') return { ok: false, reason: 'not_connected' };
    if (open === 'unreadable') {
      // A lost key, or a row that is not this account's: the user connects again (which replaces it).
      this.logger.warn('third-party connection cannot be opened with the configured keys', { account: sub, provider: p.name });
      return { ok: false, reason: 'unreadable' };
    }
    if (!expired(open.tokens)) {
      if (open.staleKey) await this.vault.replace(sub, p.name, open.tokens, open.version);
      return { ok: true, tokens: open.tokens, refreshed: false };
    }
    if (!open.tokens.refreshToken) return this.end(sub, p.name, 'expired');
    const lock = {
      ttlSeconds: 15,
      waitMs: 12_000,
      busy: () => new ProviderUnavailable(new ProviderError('unreachable', 'refresh lock busy')),
    };
    return withKvLock(this.store.kv, REFRESH_LOCKS, `${sub} ${p.name}`, lock, () => this.refreshLocked(sub, p));
  }

  private async refreshLocked(sub: string, p: ResolvedProvider): Promise<FreshTokens> {
    // Another exchange may have refreshed (or the user disconnected) while this one waited.
    const open: OpenConnection | 'none' | 'unreadable' = await this.vault.open(sub, p.name);
    if (open === 'none') return { ok: false, reason: 'disconnected' };
    if (open === 'unreadable') return { ok: false, reason: 'unreadable' };
    if (!expired(open.tokens)) return { ok: true, tokens: open.tokens, refreshed: false };
    let tokens: ProviderTokens;
    try {
      tokens = await this.providers.refresh(p, open.tokens);
    } catch (err) {
      const e = err as ProviderError;
      if (e.error === 'invalid_grant') return this.end(sub, p.name, 'refresh_refused');
      this.logger.warn('third-party token refresh failed', { provider: p.name, error: e.error, reason: e.reason });
      throw new ProviderUnavailable(e);
    }
    if (!(await this.vault.replace(sub, p.name, tokens, open.version))) return { ok: false, reason: 'disconnected' };
    return { ok: true, tokens, refreshed: true };
  }

  /** The user ends a connection (account page): removed here, then revoked at the provider when it can be. */
  async disconnect(sub: string, providerName: string, via: string): Promise<boolean> {
    const open = await this.vault.open(sub, providerName);
    if (!(await this.vault.remove(sub, providerName))) return false;
    const p = this.providers.get(providerName);
    const revoked = p && typeof open === 'object' ? await this.providers.revoke(p, open.tokens) : false;
    audit(this.logger, 'third_party.disconnected', {
      account: sub,
      provider: providerName,
      reason: 'user',
      via,
      revoked_at_provider: revoked,
    });
    return true;
  }
}

/** Third-party authorization of this server, or undefined when `thirdParty` is not configured. */
export async function createThirdParty(config: ResolvedConfig, store: Store, logger: Logger): Promise<ThirdParty | undefined> {
  if (!config.thirdParty) return undefined;
  const providers = new ThirdPartyProviders(config.thirdParty, { logger, redirectUri: `${config.issuer}/connect/callback` });
  const vault = new TokenVault(store, await vaultKeys(config.thirdParty, store, logger));
  return new ThirdParty(config.thirdParty, providers, vault, store, logger, config.clients);
}
