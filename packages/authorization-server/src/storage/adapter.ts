/**
 * The oidc-provider adapter, written once over a `ModelBackend`.
 * Semantics follow oidc-provider's own memory adapter and its adapter documentation:
 * `upsert` replaces the row (and its indexes), `expiresIn` is seconds from now (absent =
 * forever), `consume` stamps `consumed` with epoch seconds, `revokeByGrantId` removes every
 * token-like row of the grant, and an expired row is never returned.
 *
 * One deliberate difference: `consume` is atomic and conditional. oidc-provider checks
 * `code.consumed` when it reads a code and calls `consume` later in the same request, before
 * it issues tokens; two exchanges of one code at the same moment (even on two instances) both
 * pass that check. The store lets only the first `consume` stamp the row; for the grant-
 * bearing codes below a later one is a replay (RFC 6749 §4.1.2, RFC 9700 §4.5.3.1): the
 * request fails with `invalid_grant` and the grant is revoked, as oidc-provider itself does
 * when it sees a consumed code.
 */
import type { RequestContext } from './request-context.js';
import Provider, { errors, type Adapter, type AdapterPayload } from 'oidc-provider';
import { type Clock, epochSeconds } from './clock.js';
import { type ModelBackend, type NextRow, type Stamp, toRow } from './model-rows.js';

/**
 * Models whose second consumption is an attack: of concurrent consumes only the first stamps,
 * a later one fails the request and revokes the grant. `RefreshToken` too (OAuth 2.1 §4.3.1,
 * RFC 9700 §4.14.2): a client retry of a rotated token is answered before the rotation by the
 * refresh grace window (`refresh-grace.ts`), which serialises the requests of one token through
 * the key-value store; a second rotation that reaches the store anyway (grace 0, a store error
 * in the grace claim, a request that waited too long) must not make a second live chain. Every
 * model oidc-provider consumes is here or in {@link CONSUMED_NOT_SINGLE_USE} (a test reads
 * oidc-provider's models to keep it so).
 */
export const SINGLE_USE_MODELS: ReadonlySet<string> = new Set([
  'AuthorizationCode',
  'RefreshToken',
  'DeviceCode',
  'BackchannelAuthenticationRequest',
  'PreAuthorizedCode',
]);

/** Models oidc-provider consumes whose second consumption is no attack, and why. */
export const CONSUMED_NOT_SINGLE_USE: Readonly<Record<string, string>> = {
  PushedAuthorizationRequest:
    'consumed when the authorization response is sent; no grant rides on it: a concurrent second response only gives the same browser session another single-use code for the same authorization',
};

/**
 * The code or refresh token a token request looks up right after its client: oidc-provider
 * authenticates the client (`Client.find`) with the request's parameters already parsed, then
 * finds the grant's source by the presented value (an opaque token's value is its id). Read
 * from oidc-provider's public request context (`Provider.ctx`).
 */
function grantSourceOfTokenRequest(): NextRow | undefined {
  const ctx = Provider.ctx;
  if (ctx?.oidc?.route !== 'token') return undefined;
  const params = ctx.oidc.params ?? {};
  const [model, value] =
    params.grant_type === 'refresh_token'
      ? ['RefreshToken', params.refresh_token]
      : params.grant_type === 'authorization_code'
        ? ['AuthorizationCode', params.code]
        : [undefined, undefined];
  return model && typeof value === 'string' && value !== '' ? { model, id: value } : undefined;
}

/** A refresh token's stamp waiting for its successor's upsert (see `ModelAdapter.consume`). */
interface PendingRotation {
  stamp: Stamp;
  /** Set when the stamp went alone: the request's next upsert waits for it. */
  alone?: Promise<boolean>;
}

/** Pending rotations by token request (oidc-provider's request context). */
const pendingRotations = new WeakMap<object, PendingRotation>();

/** The parts of oidc-provider's request context (`Provider.ctx`) read here. */

/** `ctx` when it is a refresh at the token endpoint. */
function refreshRequest(ctx: RequestContext | undefined): RequestContext | undefined {
  return ctx?.oidc?.route === 'token' && ctx.oidc.params?.grant_type === 'refresh_token' ? ctx : undefined;
}

export class ModelAdapter implements Adapter {
  constructor(
    private readonly model: string,
    private readonly backend: ModelBackend,
    private readonly clock: Clock,
    /** Told of every grant this adapter deletes (the revocation signal, `OpenStoreOptions.onGrantRevoked`). */
    private readonly grantEnded?: (grantId: string) => Promise<void>,
    /** The request being served (oidc-provider's public `Provider.ctx`; tests give their own). */
    private readonly currentRequest: () => RequestContext | undefined = () => Provider.ctx,
  ) {}

  async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
    const row = toRow(this.model, id, payload, expiresIn, this.clock());
    const ctx = this.model === 'RefreshToken' ? refreshRequest(this.currentRequest()) : undefined;
    const pending = ctx === undefined ? undefined : pendingRotations.get(ctx);
    if (pending !== undefined && this.backend.rotate !== undefined) {
      pendingRotations.delete(ctx!);
      const { stamp, alone } = pending;
      // The successor is saved with the old token's stamp, or after it went alone; never when
      // another request stamped the old token first.
      const stamped = alone === undefined ? await this.backend.rotate(stamp, row) : await alone;
      if (!stamped) await this.refuseReplay(stamp.id, stamp.now);
      if (alone === undefined) return;
    }
    await this.backend.upsert(row);
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    if (typeof id !== 'string' || id === '') return undefined;
    return this.backend.find(this.model, id, this.clock(), this.model === 'Client' ? grantSourceOfTokenRequest() : undefined);
  }

  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    if (typeof uid !== 'string' || uid === '') return undefined;
    return this.backend.findBy(this.model, 'uid', uid, this.clock());
  }

  async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
    if (typeof userCode !== 'string' || userCode === '') return undefined;
    return this.backend.findBy(this.model, 'userCode', userCode, this.clock());
  }

  async consume(id: string): Promise<void> {
    const now = this.clock();
    if (this.model === 'RefreshToken' && this.backend.rotate !== undefined && this.deferStamp(id, now)) return;
    const stamped = await this.backend.consume(this.model, id, epochSeconds(now), now);
    if (stamped || !SINGLE_USE_MODELS.has(this.model)) return;
    await this.refuseReplay(id, now);
  }

  /**
   * A consume that did not stamp: another request consumed the row first (a replay, or a
   * concurrent rotation of one refresh token), or it has no live row (it expired, or a
   * concurrent replay already revoked its grant). Either way this request must not go on to
   * issue tokens.
   */
  private async refuseReplay(id: string, now: number): Promise<never> {
    const row = await this.backend.find(this.model, id, now);
    const grantId = typeof row?.grantId === 'string' && row.grantId !== '' ? row.grantId : undefined;
    if (row?.consumed !== undefined && grantId) {
      // The winner's tokens die too: its rows, and the grant, so tokens it saves after this
      // point have nothing left to refresh against.
      await this.backend.revokeByGrantId(grantId);
      await this.backend.destroy('Grant', grantId);
      await this.grantEnded?.(grantId);
    }
    throw new errors.InvalidGrant(`${this.model} already consumed or gone`);
  }

  /**
   * oidc-provider rotates a refresh token with `consume(old)` and then, in the same turn of the
   * event loop, `upsert(new)`. On a backend with `rotate` the stamp waits for that upsert and both
   * go as one atomic write, the successor saved only when the stamp took:
   * one round trip fewer per refresh, and never an old token stamped without its successor
   * saved (a failed write fails the request and leaves the old token usable for the retry).
   * Should no upsert come within the turn, the stamp goes alone. Either way the stamp decides:
   * a request whose stamp did not take (a concurrent rotation of the same token won) saves no
   * successor and fails as a reuse.
   */
  private deferStamp(id: string, now: number): boolean {
    const ctx = refreshRequest(this.currentRequest());
    if (ctx === undefined || pendingRotations.has(ctx)) return false;
    const pending: PendingRotation = { stamp: { model: this.model, id, consumedAt: epochSeconds(now), now } };
    pendingRotations.set(ctx, pending);
    setImmediate(() => {
      if (pendingRotations.get(ctx) !== pending) return;
      const { model, consumedAt } = pending.stamp;
      pending.alone = this.backend.consume(model, id, consumedAt, now);
      pending.alone.catch(() => undefined); // rethrown by the request's next upsert, if any
    });
    return true;
  }

  async destroy(id: string): Promise<void> {
    await this.backend.destroy(this.model, id);
    // every way a grant ends (revocation, reuse, replay, a user or operator) deletes it here
    if (this.model === 'Grant' && typeof id === 'string' && id !== '') await this.grantEnded?.(id);
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    if (typeof grantId !== 'string' || grantId === '') return;
    await this.backend.revokeByGrantId(grantId);
  }
}
