/**
 * The token vault: a user's provider tokens, sealed at rest (seal.ts) in the store's connections,
 * one per (account, provider). Only this module reads or writes the sealed member; everything
 * else sees either a summary (no secret) or, for the token exchange, the opened token set.
 */
import type { ConnectionRecord, Store } from '../storage/types.js';
import { seal, unseal, type VaultKey } from './seal.js';

/** What the vault keeps of a provider's token response (RFC 6749 §5.1). */
export interface ProviderTokens {
  accessToken: string;
  refreshToken?: string;
  /** As the provider said (`Bearer`, …). */
  tokenType: string;
  /** Epoch seconds; undefined when the provider gave no `expires_in`. */
  expiresAt?: number;
  scopes: string[];
  providerSubject?: string;
}

/** An open connection: the tokens and the version they were read at (for a conditional refresh). */
export interface OpenConnection {
  tokens: ProviderTokens;
  version: number;
  /** Sealed under a key that is not the current one (re-sealed at the next write). */
  staleKey: boolean;
}

/** A connection as the account page shows it: nothing secret. */
export type ConnectionSummary = Pick<ConnectionRecord, 'provider' | 'scopes' | 'providerSubject' | 'createdAt' | 'updatedAt'>;

interface SealedSecrets {
  access_token: string;
  refresh_token?: string;
  token_type: string;
}

export class TokenVault {
  /**
   * `keys[0]` seals every write; every key opens what it sealed (the operator's previous keys,
   * or in development the keys derived from the store's cookie keys).
   */
  constructor(
    private readonly store: Store,
    private readonly keys: readonly VaultKey[],
  ) {
    if (!keys[0]) throw new Error('the token vault needs a key');
  }

  private input(accountId: string, provider: string, tokens: ProviderTokens) {
    const key = this.keys[0]!;
    const secrets: SealedSecrets = {
      access_token: tokens.accessToken,
      ...(tokens.refreshToken !== undefined && { refresh_token: tokens.refreshToken }),
      token_type: tokens.tokenType,
    };
    return {
      accountId,
      provider,
      keyId: key.id,
      sealed: seal(JSON.stringify(secrets), key, accountId, provider),
      scopes: tokens.scopes,
      ...(tokens.providerSubject !== undefined && { providerSubject: tokens.providerSubject }),
      ...(tokens.expiresAt !== undefined && { expiresAt: tokens.expiresAt }),
    };
  }

  /** Stores (or replaces) the connection of (account, provider). */
  async save(accountId: string, provider: string, tokens: ProviderTokens): Promise<void> {
    await this.store.connections.put(this.input(accountId, provider, tokens));
  }

  /** Replaces the connection only if it is still at `version`; false when something else wrote first. */
  async replace(accountId: string, provider: string, tokens: ProviderTokens, version: number): Promise<boolean> {
    return (await this.store.connections.replace(this.input(accountId, provider, tokens), version)) !== undefined;
  }

  /**
   * The connection's tokens; `none` without one; `unreadable` when no key of this server opens
   * it (a lost key, or a row that is not this account's and provider's).
   */
  async open(accountId: string, provider: string): Promise<OpenConnection | 'none' | 'unreadable'> {
    const record = await this.store.connections.get(accountId, provider);
    if (!record) return 'none';
    const key = this.keys.find((k) => k.id === record.keyId);
    const text = key ? unseal(record.sealed, key, accountId, provider) : undefined;
    if (text === undefined) return 'unreadable';
    const secrets = JSON.parse(text) as SealedSecrets;
    return {
      version: record.version,
      staleKey: key !== this.keys[0],
      tokens: {
        accessToken: secrets.access_token,
        ...(secrets.refresh_token !== undefined && { refreshToken: secrets.refresh_token }),
        tokenType: secrets.token_type,
        scopes: record.scopes,
        ...(record.expiresAt !== undefined && { expiresAt: record.expiresAt }),
        ...(record.providerSubject !== undefined && { providerSubject: record.providerSubject }),
      },
    };
  }

  async list(accountId: string): Promise<ConnectionSummary[]> {
    return (await this.store.connections.list(accountId)).map(({ provider, scopes, providerSubject, createdAt, updatedAt }) => ({
      provider,
      scopes,
      ...(providerSubject !== undefined && { providerSubject }),
      createdAt,
      updatedAt,
    }));
  }

  /** Removes the connection; true when there was one. */
  remove(accountId: string, provider: string): Promise<boolean> {
    return this.store.connections.delete(accountId, provider);
  }
}
