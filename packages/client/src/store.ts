import { AsyncLocalStorage } from 'node:async_hooks';
import type { SignedInAccount } from './client/signed-in-account.js';
import type { AuthorizationServerMetadata } from './discovery.js';
import { copyPlainTree, isPlainTree } from './plain-copy.js';
import { assertStorable } from './stored-values.js';

/** Client credentials for one authorization server (keyed by its `issuer`). */
export interface ClientInformation {
  /** The AS `issuer` these credentials belong to (MCP Authorization Server Binding). */
  issuer: string;
  client_id: string;
  client_secret?: string;
  /** `none`, `client_secret_basic`, `client_secret_post` or `private_key_jwt`. */
  token_endpoint_auth_method?: string;
  /** The redirect URI registered by DCR, reused so the loopback listener keeps its port. */
  redirect_uri?: string;
  /** How the credentials were obtained. */
  source: 'pre-registered' | 'cimd' | 'dcr' | 'host';
  [key: string]: unknown;
}

/** Tokens for one (issuer, resource) pair. */
export interface StoredTokens {
  issuer: string;
  resource: string;
  access_token: string;
  token_type: string;
  refresh_token?: string;
  /** Epoch seconds. */
  expires_at?: number;
  /** Granted scope when the AS said so, else the requested scope. */
  scope?: string;
  /** The scope that was requested (basis of the step-up union). */
  requested_scope?: string;
  client_id: string;
  /** RFC 9449: JWK thumbprint of the DPoP key the tokens are bound to. */
  dpop_jkt?: string;
  /** Which account the authorization server signed in, when it said so (see SignedInAccount). */
  account?: SignedInAccount;
}

/**
 * RFC 9449: a DPoP key for one (issuer, resource) pair, kept so that DPoP-bound tokens stay usable
 * in a later process (the CLI). The private key is as sensitive as the refresh token next to it.
 */
export interface StoredDpopKey {
  issuer: string;
  resource: string;
  alg: string;
  /** Private JWK (includes the public members). */
  private_jwk: Record<string, unknown>;
  /** RFC 7638 thumbprint of the public key. */
  jkt: string;
}

/** What the client learned about an MCP server: which resource identifier and AS it uses. */
export interface ServerBinding {
  /** MCP server URL (no query, no fragment). */
  server: string;
  /** PRM `resource`, exactly as published. */
  resource: string;
  issuer: string;
  resource_metadata_url?: string;
  as_metadata: AuthorizationServerMetadata;
  scopes_supported?: string[];
  /** RFC 9728 §2: the resource announces DPoP (`dpop_signing_alg_values_supported` or `dpop_bound_access_tokens_required`). */
  dpop_supported?: boolean;
}

/**
 * Persistent state of the client. Implementations must keep secrets confidential (MCP Token
 * Theft: secure token storage). All methods may be async.
 */
export interface AuthStore {
  getClient(issuer: string): Promise<ClientInformation | undefined>;
  setClient(info: ClientInformation): Promise<void>;
  deleteClient(issuer: string): Promise<void>;
  getTokens(issuer: string, resource: string): Promise<StoredTokens | undefined>;
  setTokens(tokens: StoredTokens): Promise<void>;
  deleteTokens(issuer: string, resource: string): Promise<void>;
  getServer(server: string): Promise<ServerBinding | undefined>;
  setServer(binding: ServerBinding): Promise<void>;
  deleteServer(server: string): Promise<void>;
  listServers(): Promise<ServerBinding[]>;
  /**
   * Optional: every stored token record and client registration, whatever server binding names
   * them (logout and status find the records of an authorization server a server no longer names).
   */
  listTokens?(): Promise<StoredTokens[]>;
  listClients?(): Promise<ClientInformation[]>;
  /** Optional: persisted DPoP keys (without them, keys live in the client's memory only). */
  getDpopKey?(issuer: string, resource: string): Promise<StoredDpopKey | undefined>;
  setDpopKey?(key: StoredDpopKey): Promise<void>;
  deleteDpopKey?(issuer: string, resource: string): Promise<void>;
  /**
   * Optional: runs `fn` while holding an exclusive lock shared with other processes using the same
   * store (the file store uses a lock file). The client refreshes under it, so two processes never
   * redeem the same rotating refresh token. With a `key`, the lock is that key's alone (the client
   * refreshes under `refresh <issuer, resource>`, so a slow token endpoint holds up no other
   * server); store calls inside such a section take the store's own lock as usual. A store may
   * ignore `key` and lock everything.
   */
  withLock?<T>(fn: () => Promise<T>, key?: string): Promise<T>;
}

/** Serializable content of a store (used by {@link MemoryStore} and the file store). */
export interface StoreData {
  version: 1;
  clients: Record<string, ClientInformation>;
  tokens: Record<string, StoredTokens>;
  servers: Record<string, ServerBinding>;
  /** DPoP keys by {@link tokenKey} (absent in files written before DPoP keys were kept). */
  dpop_keys?: Record<string, StoredDpopKey>;
}

/** The maps of a {@link StoreData} that hold one kind of record each. */
type EntryMap = 'clients' | 'tokens' | 'servers';

export function emptyStoreData(): StoreData {
  return { version: 1, clients: {}, tokens: {}, servers: {} };
}

export function tokenKey(issuer: string, resource: string): string {
  return JSON.stringify([issuer, resource]);
}

/**
 * The stores whose lock the current async context holds, so nested store calls do not re-lock.
 * One instance for every store, enabled only while a section runs: on Node versions where
 * AsyncLocalStorage works through async hooks, an enabled instance slows every promise of the
 * process and stays in Node's list until disabled (one instance per store would pile up there).
 */
const lockedStores = new AsyncLocalStorage<ReadonlySet<object>>();
let sectionsRunning = 0;

async function insideLock<T>(lock: object, fn: () => Promise<T>): Promise<T> {
  sectionsRunning++;
  try {
    return await lockedStores.run(new Set([...(lockedStores.getStore() ?? []), lock]), fn);
  } finally {
    // no section left: nothing needs the context any more (work `fn` left behind takes the lock)
    if (--sectionsRunning === 0) lockedStores.disable();
  }
}

/** Applies store operations to a {@link StoreData}; shared by the memory and file stores. */
export abstract class DataStore implements AuthStore {
  protected abstract read(): Promise<StoreData>;
  protected abstract write(data: StoreData): Promise<void>;
  /**
   * Takes the cross-process part of the lock; returns its release. Default: nothing to take
   * (in-process only). The file store creates a lock file.
   */
  protected async acquire(_key?: string): Promise<() => Promise<void>> {
    return async () => undefined;
  }
  /** Per lock (the store's own: key undefined), the tail of the sections waiting for it in this process. */
  private readonly chains = new Map<string | undefined, { id: object; tail: Promise<unknown> }>();

  /**
   * Exclusive section: serialized within the process and, for the file store, across processes.
   * Re-entrant: store methods called from inside `fn` run directly (inside a keyed section, they
   * take the store's own lock).
   */
  withLock<T>(fn: () => Promise<T>, key?: string): Promise<T> {
    let chain = this.chains.get(key);
    if (!chain) {
      chain = { id: key === undefined ? this : {}, tail: Promise.resolve() };
      this.chains.set(key, chain);
    }
    const { id } = chain;
    if (lockedStores.getStore()?.has(id)) return fn();
    const run = chain.tail.then(async () => {
      const release = await this.acquire(key);
      try {
        return await insideLock(id, fn);
      } finally {
        await release();
      }
    });
    chain.tail = run.catch(() => undefined);
    return run;
  }

  /**
   * One part of the data, the caller's own copy. Default: all of it read, the part kept; the
   * memory store copies only the part (a client reads its tokens and binding on every request).
   */
  protected async readPart<T>(pick: (d: StoreData) => T): Promise<T> {
    return pick(await this.read());
  }

  private update(fn: (d: StoreData) => void): Promise<void> {
    return this.withLock(() => this.modify(fn));
  }

  /**
   * Applies one update to the data, inside the lock. `fn` only sets, replaces or deletes entries of
   * the data's maps (never edits an entry in place). Default: all of it read, changed, written.
   */
  protected async modify(fn: (d: StoreData) => void): Promise<void> {
    const data = await this.read();
    fn(data);
    await this.write(data);
  }

  getClient(issuer: string): Promise<ClientInformation | undefined> {
    return this.readPart((d) => d.clients[issuer]);
  }
  getTokens(issuer: string, resource: string): Promise<StoredTokens | undefined> {
    return this.readPart((d) => d.tokens[tokenKey(issuer, resource)]);
  }
  getServer(server: string): Promise<ServerBinding | undefined> {
    return this.readPart((d) => d.servers[server]);
  }
  async setClient(info: ClientInformation) {
    assertStorable('client', info);
    return this.setEntry('clients', info.issuer, info);
  }
  async setTokens(tokens: StoredTokens) {
    assertStorable('tokens', tokens);
    return this.setEntry('tokens', tokenKey(tokens.issuer, tokens.resource), tokens);
  }
  async setServer(binding: ServerBinding) {
    assertStorable('server', binding);
    return this.setEntry('servers', binding.server, binding);
  }
  deleteClient(issuer: string): Promise<void> {
    return this.deleteEntry('clients', issuer);
  }
  deleteTokens(issuer: string, resource: string): Promise<void> {
    return this.deleteEntry('tokens', tokenKey(issuer, resource));
  }
  deleteServer(server: string): Promise<void> {
    return this.deleteEntry('servers', server);
  }
  private setEntry<M extends EntryMap>(map: M, key: string, record: StoreData[M][string]): Promise<void> {
    return this.update((d) => {
      (d[map] as Record<string, StoreData[M][string]>)[key] = record;
    });
  }
  private deleteEntry(map: EntryMap, key: string): Promise<void> {
    return this.update((d) => {
      delete d[map][key];
    });
  }
  listServers() {
    return this.readPart((d) => Object.values(d.servers));
  }
  listTokens() {
    return this.readPart((d) => Object.values(d.tokens));
  }
  listClients() {
    return this.readPart((d) => Object.values(d.clients));
  }
  getDpopKey(issuer: string, resource: string) {
    return this.readPart((d) => d.dpop_keys?.[tokenKey(issuer, resource)]);
  }
  async setDpopKey(key: StoredDpopKey) {
    assertStorable('dpopKey', key);
    return this.update((d) => {
      d.dpop_keys = { ...d.dpop_keys, [tokenKey(key.issuer, key.resource)]: key };
    });
  }
  deleteDpopKey(issuer: string, resource: string) {
    return this.update((d) => {
      if (d.dpop_keys) delete d.dpop_keys[tokenKey(issuer, resource)];
    });
  }
}

/** In-memory store: nothing survives the process. */
export class MemoryStore extends DataStore {
  private data: StoreData = emptyStoreData();
  protected async read() {
    return structuredClone(this.data);
  }
  protected override async readPart<T>(pick: (d: StoreData) => T): Promise<T> {
    const part = pick(this.data);
    return typeof part === 'object' && part !== null && plainEntries.has(part) ? copyPlainTree(part) : structuredClone(part);
  }
  protected async write(data: StoreData) {
    this.data = structuredClone(data);
  }
  /**
   * Copies only what an update brings in: the maps one level deep, then each entry the store did
   * not hold before, so the store still shares no object with its callers. Two whole-store copies
   * per write (read, then write) would cost about 1 % of a first-contact flow's CPU (what bench
   * case 4 measures).
   */
  protected override async modify(fn: (d: StoreData) => void): Promise<void> {
    const draft = mapsCopied(this.data);
    fn(draft);
    const before = this.data as unknown as Record<string, Record<string, unknown> | undefined>;
    for (const [name, entries] of entryMaps(draft)) {
      for (const [key, value] of Object.entries(entries)) {
        if (before[name]?.[key] !== value) entries[key] = ownCopy(value);
      }
    }
    this.data = draft;
  }
}

/**
 * Entries of memory stores known to be plain data ({@link isPlainTree}): read back with a plain
 * copy, which is several times faster than `structuredClone` for a client's small entries.
 */
const plainEntries = new WeakSet<object>();

/** The store's own copy of a value given to a setter, classified once for its reads. */
function ownCopy(value: unknown): unknown {
  const copy = structuredClone(value);
  if (typeof copy === 'object' && copy !== null && isPlainTree(copy)) plainEntries.add(copy);
  return copy;
}

/** The data's maps (clients, tokens, ...): every member that is an object. */
function entryMaps(data: StoreData): Array<[string, Record<string, unknown>]> {
  return Object.entries(data).filter(
    (member): member is [string, Record<string, unknown>] => typeof member[1] === 'object' && member[1] !== null,
  );
}

/** `data` with each of its maps copied one level deep (entries shared). */
function mapsCopied(data: StoreData): StoreData {
  const copy: Record<string, unknown> = { ...data };
  for (const [name, entries] of entryMaps(data)) copy[name] = { ...entries };
  return copy as unknown as StoreData;
}
