/**
 * What an oidc-provider model row looks like once its payload has been indexed, and the
 * backend operations every implementation provides. The adapter semantics live once in
 * `adapter.ts`; backends only store, look up and delete rows.
 */
import type { AdapterPayload } from '../provider/oidc-shapes.js';

/**
 * Models that belong to a grant: `revokeByGrantId` deletes every row of these models
 * carrying the grant's id (the same set oidc-provider's own memory adapter tracks).
 */
export const GRANTABLE_MODELS: ReadonlySet<string> = new Set([
  'AccessToken',
  'AuthorizationCode',
  'RefreshToken',
  'DeviceCode',
  'BackchannelAuthenticationRequest',
  'PreAuthorizedCode',
]);

export interface ModelRow {
  model: string;
  id: string;
  payload: AdapterPayload;
  grantId: string | null;
  uid: string | null;
  userCode: string | null;
  /** Epoch milliseconds; null = never expires (e.g. `Client`). */
  expiresAt: number | null;
}

/** A `consume` of one row: `consumedAt` in epoch seconds, `now` in epoch milliseconds. */
export interface Stamp {
  model: string;
  id: string;
  consumedAt: number;
  now: number;
}

export type IndexedField = 'uid' | 'userCode';

/** Every read takes `now` (epoch ms): a row with `expiresAt <= now` is never returned. */
/** A row a request is about to look up (see `ModelBackend.find`). */
export interface NextRow {
  model: string;
  id: string;
}

export interface ModelBackend {
  upsert(row: ModelRow): Promise<void>;
  /**
   * `next`: a row the same request looks up right after this one (a token request's code or
   * refresh token, after its client); a backend may read it in the same round trip.
   */
  find(model: string, id: string, now: number, next?: NextRow): Promise<AdapterPayload | undefined>;
  findBy(model: string, field: IndexedField, value: string, now: number): Promise<AdapterPayload | undefined>;
  /**
   * Sets `payload.consumed = consumedAt` on a live row that is not consumed yet, atomically
   * (one conditional write): of concurrent callers, across processes sharing the store, exactly
   * one gets `true`. `false` = no live row, or already consumed (its first stamp is kept).
   */
  consume(model: string, id: string, consumedAt: number, now: number): Promise<boolean>;
  /**
   * A refresh token's rotation (see `ModelAdapter.consume`): `consume(stamp)` and then, only if
   * that stamped the row, `upsert(row)`, as one atomic write; returns whether it stamped. Of
   * concurrent rotations of one row, across processes sharing the store, exactly one gets
   * `true` and saves its row; the others write nothing. Optional: without it the adapter
   * stamps and then saves (two writes).
   */
  rotate?(stamp: Stamp, row: ModelRow): Promise<boolean>;
  destroy(model: string, id: string): Promise<void>;
  /** Every live row of one model, by id (the operator console's client list; never a token model in a hot path). */
  list(model: string, now: number): Promise<Array<{ id: string; payload: AdapterPayload }>>;
  /** Deletes every grantable row of the grant, whatever its model. */
  revokeByGrantId(grantId: string): Promise<void>;
}

export function toRow(model: string, id: string, payload: AdapterPayload, expiresIn: number | undefined, now: number): ModelRow {
  const grantId = GRANTABLE_MODELS.has(model) && typeof payload.grantId === 'string' ? payload.grantId : null;
  return {
    model,
    id,
    payload,
    grantId,
    uid: typeof payload.uid === 'string' ? payload.uid : null,
    userCode: typeof payload.userCode === 'string' ? payload.userCode : null,
    expiresAt: typeof expiresIn === 'number' && Number.isFinite(expiresIn) ? Math.round(now + expiresIn * 1000) : null,
  };
}
