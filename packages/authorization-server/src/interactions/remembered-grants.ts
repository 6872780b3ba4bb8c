/**
 * Grants remembered per account and client, across browser sessions and instances, in
 * `store.kv` next to oidc-provider's Grant records (which hold the approved scopes per
 * resource): one record per (account, client) → grantId, written atomically, is the truth;
 * an index `accountId → { clientId: grantId }` serves the listings (a read-modify-write that
 * two instances could race on, so every lookup puts a missing entry back). Entries whose Grant
 * has expired or was revoked are dropped when read.
 */
import type Provider from 'oidc-provider';
import type { Store } from '../storage/types.js';
import { withKvLock } from '../storage/kv-lock.js';

const NAMESPACE = 'account-grants';
const PAIRS = 'account-client-grant';
const pairKey = (accountId: string, clientId: string) => `${accountId} ${clientId}`;
/** The index outlives any grant; entries are pruned against the Grant records. */
const INDEX_TTL = 400 * 24 * 3600;
const LOCKS = 'account-client-grant-lock';
/** How long a holder that died keeps its pair locked; the work under the lock takes milliseconds. */
const LOCK_TTL = 10;
/** How long a request waits for the pair before giving up (temporarily_unavailable). */
const LOCK_WAIT_MS = 3000;

/** The pair's lock stayed taken for LOCK_WAIT_MS. */
export class GrantPairBusy extends Error {
  constructor() {
    super('another request is creating the grant of this account for this client');
  }
}

type Index = Record<string, string>;
type Grant = InstanceType<Provider['Grant']>;

export interface RememberedGrant {
  clientId: string;
  grantId: string;
  /** resource → granted scopes. */
  resources: Record<string, string[]>;
  oidcScopes: string[];
}

/** Models whose records carry a grantId (oidc-provider's revoke helper uses the same list). */
const GRANT_BOUND_MODELS = ['AccessToken', 'AuthorizationCode', 'RefreshToken', 'DeviceCode', 'BackchannelAuthenticationRequest'];

/** @internal */
export class RememberedGrants {
  constructor(
    private readonly provider: Provider,
    private readonly store: Store,
  ) {}

  private async index(accountId: string): Promise<Index> {
    return (await this.store.kv.get<Index>(NAMESPACE, accountId)) ?? {};
  }

  /**
   * Runs `fn` alone for this (account, client), across instances (kv-lock.ts).
   * A find-or-create of the pair's grant runs under it, so that concurrent requests share one
   * grant, instead of all but the last writer's grant living outside the index, where no
   * revocation from the account page or the admin tool reaches it.
   */
  async exclusive<T>(accountId: string, clientId: string, fn: () => Promise<T>): Promise<T> {
    const options = { ttlSeconds: LOCK_TTL, waitMs: LOCK_WAIT_MS, busy: () => new GrantPairBusy() };
    return withKvLock(this.store.kv, LOCKS, pairKey(accountId, clientId), options, fn);
  }

  async remember(accountId: string, clientId: string, grantId: string): Promise<void> {
    await this.store.kv.set(PAIRS, pairKey(accountId, clientId), grantId, INDEX_TTL);
    await this.addToIndex(accountId, clientId, grantId);
  }

  private async addToIndex(accountId: string, clientId: string, grantId: string): Promise<void> {
    const index = await this.index(accountId);
    if (index[clientId] === grantId) return;
    index[clientId] = grantId;
    await this.store.kv.set(NAMESPACE, accountId, index, INDEX_TTL);
  }

  /** The live grant of this account for this client, if any. */
  async find(accountId: string, clientId: string): Promise<Grant | undefined> {
    const index = await this.index(accountId);
    const grantId = (await this.store.kv.get<string>(PAIRS, pairKey(accountId, clientId))) ?? index[clientId];
    if (!grantId) return undefined;
    const grant = await this.provider.Grant.find(grantId);
    if (!grant || grant.accountId !== accountId || grant.clientId !== clientId) {
      await this.forget(accountId, clientId);
      return undefined;
    }
    if (index[clientId] !== grantId) await this.addToIndex(accountId, clientId, grantId);
    return grant;
  }

  async list(accountId: string): Promise<RememberedGrant[]> {
    const out: RememberedGrant[] = [];
    for (const clientId of Object.keys(await this.index(accountId))) {
      const grant = await this.find(accountId, clientId);
      if (!grant) continue;
      const resources: Record<string, string[]> = {};
      for (const resource of Object.keys(grant.resources ?? {})) {
        const scopes = grant.getResourceScope(resource).split(' ').filter(Boolean);
        if (scopes.length) resources[resource] = scopes;
      }
      out.push({ clientId, grantId: grant.jti, resources, oidcScopes: grant.getOIDCScope().split(' ').filter(Boolean) });
    }
    return out.sort((a, b) => a.clientId.localeCompare(b.clientId));
  }

  /** Revokes the grant and every token and code issued under it; true when there was one. */
  async revoke(accountId: string, clientId: string): Promise<boolean> {
    const grant = await this.find(accountId, clientId);
    await this.forget(accountId, clientId);
    if (!grant) return false;
    await revokeGrant(this.store, grant.jti);
    return true;
  }

  private async forget(accountId: string, clientId: string): Promise<void> {
    await this.store.kv.delete(PAIRS, pairKey(accountId, clientId));
    const index = await this.index(accountId);
    if (!(clientId in index)) return;
    delete index[clientId];
    if (Object.keys(index).length) await this.store.kv.set(NAMESPACE, accountId, index, INDEX_TTL);
    else await this.store.kv.delete(NAMESPACE, accountId);
  }
}

/** Deletes a grant and everything issued under it, straight in the store (no provider needed). */
export async function revokeGrant(store: Store, grantId: string): Promise<void> {
  for (const model of GRANT_BOUND_MODELS) await store.adapter(model).revokeByGrantId(grantId);
  await store.adapter('Grant').destroy(grantId);
}

/** Store-only view for operator tools: `clientId → grantId` of an account. */
export async function rememberedGrantIds(store: Store, accountId: string): Promise<Index> {
  return (await store.kv.get<Index>(NAMESPACE, accountId)) ?? {};
}

/** Store-only revocation for operator tools; true when the account had a grant for the client. */
export async function revokeRememberedGrant(store: Store, accountId: string, clientId: string): Promise<boolean> {
  const index = await rememberedGrantIds(store, accountId);
  const grantId = (await store.kv.get<string>(PAIRS, pairKey(accountId, clientId))) ?? index[clientId];
  if (!grantId) return false;
  await revokeGrant(store, grantId);
  await store.kv.delete(PAIRS, pairKey(accountId, clientId));
  delete index[clientId];
  if (Object.keys(index).length) await store.kv.set(NAMESPACE, accountId, index, INDEX_TTL);
  else await store.kv.delete(NAMESPACE, accountId);
  return true;
}

/**
 * Store-only revocation of every remembered grant of an account (disabling, adoption): each goes
 * through {@link revokeGrant}, so the store's `onGrantRevoked` (Redis signal, outbox) hears of
 * it, and a later re-enable finds no refresh token to revive. Returns the client ids revoked.
 */
export async function revokeAccountGrants(store: Store, accountId: string): Promise<string[]> {
  const revoked: string[] = [];
  for (const clientId of Object.keys(await rememberedGrantIds(store, accountId))) {
    if (await revokeRememberedGrant(store, accountId, clientId)) revoked.push(clientId);
  }
  return revoked;
}

export interface AccountGrantSummary {
  clientId: string;
  grantId: string;
  /** resource → granted scopes */
  resources: Record<string, string[]>;
  /** Epoch seconds. */
  expiresAt?: number;
}

/** Store-only listing for operator tools: the live remembered grants of an account. */
export async function listAccountGrants(store: Store, accountId: string): Promise<AccountGrantSummary[]> {
  const out: AccountGrantSummary[] = [];
  for (const [clientId, grantId] of Object.entries(await rememberedGrantIds(store, accountId))) {
    const payload = (await store.adapter('Grant').find(grantId)) as
      | { accountId?: string; clientId?: string; resources?: Record<string, string>; exp?: number }
      | undefined;
    if (!payload || payload.accountId !== accountId || payload.clientId !== clientId) continue;
    const resources: Record<string, string[]> = {};
    for (const [resource, scope] of Object.entries(payload.resources ?? {})) resources[resource] = scope.split(' ').filter(Boolean);
    out.push({ clientId, grantId, resources, expiresAt: payload.exp });
  }
  return out.sort((a, b) => a.clientId.localeCompare(b.clientId));
}
