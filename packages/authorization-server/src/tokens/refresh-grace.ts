/**
 * Refresh under concurrency: a short grace window for a rotated refresh token.
 *
 * oidc-provider rotates refresh tokens and revokes the whole grant when a consumed one comes
 * back (RFC 9700 §4.14.2 reuse detection). Two near-simultaneous refreshes of one token by the
 * same client (two tabs, two processes, a retry after a lost response, two AS instances behind
 * a load balancer) would therefore log the user out. Policy:
 *
 * - The first refresh of a token atomically claims it in the shared key-value store and runs
 *   normally; its response is kept for `reuseGraceSeconds` (from that first request), sealed
 *   with a key derived from the presented refresh token (only its holder can read it).
 * - Within the window, the same token from the SAME authenticated client with the same request
 *   (scope, resource, DPoP key) gets the same response again — the same access token and the
 *   same new refresh token — provided that new refresh token is still unused and its grant
 *   still alive. A concurrent request waits (bounded) for the first one to finish.
 * - Anything else is reuse: after the window, with other parameters or another DPoP key, or
 *   once the new refresh token was used, the provider's reuse detection revokes the grant. A
 *   consumed token presented by ANOTHER client revokes the grant too (the token leaked).
 * - A request that fails the provider's checks (client authentication, `use_dpop_nonce`,
 *   `invalid_scope`, a replayed proof, …) fails before it claims anything, so the corrected
 *   retry is the protected first refresh. A first refresh that fails after its claim releases
 *   it; requests waiting on it then take turns (each gets the provider's own answer).
 * - A `resource` the grant does not cover is refused (`invalid_target`) before the token is
 *   consumed (oidc-provider checks it only after rotating, which burnt the token).
 *
 * Mounted through oidc-provider's public surface only (so a caret range of it works):
 * - a checkpoint in the `findAccount` hook (provider.ts calls {@link refreshGraceCheckpoint}).
 *   oidc-provider's `refresh_token` grant looks the account up after it has authenticated the
 *   client, validated the DPoP proof (and recorded its `jti`), the grant, the scope and the
 *   token's key binding, and before it looks at `consumed` and rotates: the point where a first
 *   refresh claims the token and a repeat is decided. A repeat to serve leaves the grant
 *   handler through {@link RefreshGraceRepeat} (its only exit before the rotation); a repeat
 *   refused is left to the provider's reuse detection, with the token as the store has it now.
 * - a Koa middleware around the provider's router (`provider.use`): it keeps the first
 *   response, puts the kept response in place of a served repeat's error, and revokes the grant
 *   when another client presented a consumed token. A refresh answered without passing the
 *   checkpoint (an oidc-provider whose grant no longer calls `findAccount` there) is logged as
 *   an error naming the way out.
 */
import { DEFAULTS } from '../config/defaults.js';
import type Provider from 'oidc-provider';
import { errors, type KoaContextWithOIDC } from 'oidc-provider';
import type { KeyValueStore } from '../storage/types.js';
import type { Logger } from '../ops/logger.js';
import { audit } from '../ops/audit.js';
import { checkRefreshResource } from './refresh-grace/resource-check.js';
import { proofKeyThumbprint } from './refresh-grace/proof-key.js';
import { revokeCrossClientReuse } from './refresh-grace/cross-client.js';
import { isRefreshRequest, jsonBody, requestFingerprint } from './refresh-grace/request.js';
import {
  graceSlot,
  isFailureMarker,
  openGraceRecord,
  sealGracePayload,
  type GracePayload,
  type GraceRecord,
} from './refresh-grace/sealed-response.js';

/** Default grace window in seconds (`refreshTokens.reuseGraceSeconds`). */
export const DEFAULT_REFRESH_REUSE_GRACE_SECONDS = DEFAULTS.refreshTokens.reuseGraceSeconds;
/** Upper bound of `refreshTokens.reuseGraceSeconds`: a longer window weakens reuse detection. */
export const MAX_REFRESH_REUSE_GRACE_SECONDS = 60;
/** Key-value namespace of the claims (`c:<slot>`) and sealed responses (`r:<slot>`). */
export const REFRESH_GRACE_NAMESPACE = 'refresh-grace';

export interface RefreshGraceOptions {
  kv: KeyValueStore;
  /** Grace window in seconds; 0: none (the early resource check and cross-client revocation stay). */
  graceSeconds: number;
  logger: Logger;
  /** How long a concurrent request waits for the first one's response (default min(window, 10 s)). */
  maxWaitMs?: number;
  /** Interval between store reads while waiting (default 25 ms). */
  pollMs?: number;
}

/** Configuration problems of `refreshTokens.reuseGraceSeconds` (empty when fine). */
export function refreshGraceConfigProblems(value: unknown): string[] {
  if (value === undefined) return [];
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_REFRESH_REUSE_GRACE_SECONDS) {
    return [`refreshTokens.reuseGraceSeconds: must be an integer from 0 (off) to ${MAX_REFRESH_REUSE_GRACE_SECONDS} (seconds)`];
  }
  return [];
}

type Ctx = KoaContextWithOIDC;
/** The fields of oidc-provider's RefreshToken model read here (`consumed` is also re-synced). */
interface FoundRefreshToken {
  kind?: string;
  consumed?: unknown;
  clientId?: string;
  accountId?: string;
  grantId?: string;
  'x5t#S256'?: string;
  resourceIndicators?: ReadonlySet<string>;
}

/** What the checkpoint decided for one token request, read by the middleware after it. */
type RequestState =
  | { kind: 'first'; slot: string; value: string; clientId: string; jkt?: string; done: (record?: GraceRecord) => void }
  | { kind: 'repeat'; payload: GracePayload; token: FoundRefreshToken }
  | { kind: 'checked' };

/**
 * How a served repeat leaves oidc-provider's grant handler: the middleware replaces the error
 * response with the kept one. An `invalid_grant`, so that a response it did not replace would
 * still give nothing away.
 */
export class RefreshGraceRepeat extends errors.InvalidGrant {
  constructor() {
    super('refresh token already used');
  }
}

/** Not a refusal: provider-events.ts leaves it out of the error log and metrics. */
export function isRefreshGraceRepeat(err: unknown): boolean {
  return err instanceof RefreshGraceRepeat;
}

const installed = new WeakMap<object, RefreshGrace>();

/**
 * Called by the `findAccount` hook with the token it was given: for a refresh, after
 * oidc-provider's checks and before its rotation (see the top of this file).
 */
export async function refreshGraceCheckpoint(ctx: Ctx, token: unknown): Promise<void> {
  const provider = ctx?.oidc?.provider;
  const grace = provider ? installed.get(provider) : undefined;
  if (grace) await grace.checkpoint(ctx, token);
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** `promise`'s value, or undefined after `ms`, whichever comes first (no timer left behind). */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

function reason(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Puts the grace window (and the early `resource` check and the cross-client revocation, which
 * apply even with `graceSeconds` 0) on the provider's refresh. Call once, after the provider
 * is built (its `findAccount` calling {@link refreshGraceCheckpoint}) and before it serves.
 */
export async function installRefreshGrace(provider: Provider, options: RefreshGraceOptions): Promise<void> {
  if (!provider || typeof provider.use !== 'function' || typeof provider.RefreshToken?.find !== 'function') {
    throw new Error(
      'refresh grace: not an oidc-provider instance (use() and RefreshToken.find() missing); ' +
        'set refreshTokens.reuseGraceSeconds to 0 to start without the grace window',
    );
  }
  const grace = new RefreshGrace(provider, options);
  installed.set(provider, grace);
  provider.use((ctx, next) => grace.around(ctx as Ctx, next));
}

class RefreshGrace {
  private readonly kv: KeyValueStore;
  private readonly graceSeconds: number;
  private readonly logger: Logger;
  private readonly maxWaitMs: number;
  private readonly pollMs: number;
  /** First requests in flight on this instance, to their outcome: a waiter here need not read the store. */
  private readonly inFlight = new Map<string, Promise<GraceRecord | undefined>>();
  private readonly requests = new WeakMap<object, RequestState>();

  constructor(
    private readonly provider: Provider,
    options: RefreshGraceOptions,
  ) {
    this.kv = options.kv;
    this.graceSeconds = options.graceSeconds;
    this.logger = options.logger;
    // A waiter that gives up falls through to reuse detection (a logout): wait as long as the window.
    this.maxWaitMs = options.maxWaitMs ?? Math.min(this.graceSeconds * 1000, 10_000);
    this.pollMs = options.pollMs ?? 25;
  }

  /** The middleware around the provider's router. */
  async around(ctx: Ctx, next: () => Promise<unknown>): Promise<void> {
    let threw = true;
    try {
      await next();
      threw = false;
    } finally {
      const state = this.requests.get(ctx);
      if (state?.kind === 'first') await this.keepOutcome(ctx, state, threw);
      else if (!threw && state?.kind === 'repeat') this.serve(ctx, state.payload, state.token);
      else if (!threw && !state && isRefreshRequest(ctx)) await this.unchecked(ctx);
    }
  }

  async checkpoint(ctx: Ctx, found: unknown): Promise<void> {
    const token = found as FoundRefreshToken | undefined;
    if (!isRefreshRequest(ctx) || token?.kind !== 'RefreshToken' || this.requests.has(ctx)) return;
    this.requests.set(ctx, { kind: 'checked' });
    const value = ctx.oidc.params?.refresh_token;
    if (typeof value !== 'string') return;
    checkRefreshResource(ctx.oidc.params?.resource, token.resourceIndicators);
    // mTLS-bound tokens are not used by this kit: leave them to the provider.
    if (!(this.graceSeconds > 0) || token['x5t#S256']) return;

    const clientId = ctx.oidc.client!.clientId;
    const jkt = await proofKeyThumbprint(ctx);
    const slot = graceSlot(value);
    const deadline = Date.now() + this.maxWaitMs;
    for (let turn = 0; ; turn++) {
      let claim: number;
      try {
        claim = await this.kv.increment(REFRESH_GRACE_NAMESPACE, `c:${slot}`, 1, this.graceSeconds);
      } catch (err) {
        // Without the window, not without reuse detection: the store lets exactly one concurrent
        // rotation of this token succeed and revokes the grant for the others (storage/adapter.ts).
        this.logger.warn('refresh grace unavailable (store error): refreshing without it', { client_id: clientId, detail: reason(err) });
        return;
      }
      if (claim === 1) {
        // After waiting on a failed first refresh, the token may have been consumed meanwhile.
        if (turn > 0) await this.resync(token, value);
        if (!token.consumed) return this.first(ctx, { slot, value, clientId, jkt });
        // Consumed before anyone claimed it in this window: the window is over, reuse detection.
        await this.kv.delete(REFRESH_GRACE_NAMESPACE, `c:${slot}`).catch(() => undefined);
        return;
      }
      const record = await this.awaitRecord(slot, deadline);
      // The first attempt failed and released its claim: take a turn (one at a time), so each
      // request gets the provider's own answer and a corrected retry is protected in turn.
      if (isFailureMarker(record) && Date.now() < deadline) {
        await sleep(this.pollMs);
        continue;
      }
      return this.repeat(ctx, value, slot, clientId, jkt, token, record);
    }
  }

  /** The first refresh of this token in the window: the provider rotates, the middleware keeps. */
  private first(ctx: Ctx, claim: { slot: string; value: string; clientId: string; jkt?: string }): void {
    let done!: (record?: GraceRecord) => void;
    this.inFlight.set(claim.slot, new Promise<GraceRecord | undefined>((resolve) => (done = resolve)));
    this.requests.set(ctx, { kind: 'first', ...claim, done });
  }

  /** After the first refresh: keep its response (sealed), or mark it failed and release the claim. */
  private async keepOutcome(ctx: Ctx, state: Extract<RequestState, { kind: 'first' }>, threw: boolean): Promise<void> {
    const { slot, value, clientId } = state;
    let record: GraceRecord | undefined;
    try {
      const body = threw || ctx.status !== 200 ? undefined : jsonBody(ctx);
      // No need to clear an older failure marker first: this write replaces it, and a waiter
      // that reads it meanwhile only takes another turn.
      record =
        body && typeof body.refresh_token === 'string'
          ? sealGracePayload(value, slot, {
              clientId,
              jkt: state.jkt,
              request: requestFingerprint(ctx.oidc.params as Record<string, unknown>),
              body,
              issuedAt: Date.now(),
            })
          : { v: 1, failed: true };
      if ('failed' in record) {
        await this.keep(slot, record, clientId);
        // A failed attempt releases the claim: the client's corrected retry becomes the first.
        await this.kv.delete(REFRESH_GRACE_NAMESPACE, `c:${slot}`).catch(() => undefined);
      } else {
        // The response does not wait for this write (a round trip on a shared store): waiters
        // on this instance get the record from `done`, and those on other instances read the
        // store until it is there, as they do while the first request runs.
        void this.keep(slot, record, clientId);
      }
    } finally {
      this.inFlight.delete(slot);
      state.done(record);
    }
  }

  private async keep(slot: string, record: GraceRecord, clientId: string): Promise<void> {
    try {
      await this.kv.set(REFRESH_GRACE_NAMESPACE, `r:${slot}`, record, this.graceSeconds);
    } catch (err) {
      this.logger.warn('refresh grace: could not keep the outcome', { client_id: clientId, detail: reason(err) });
    }
  }

  /** The same token again within the window: serve the first response when it is safe to. */
  private async repeat(
    ctx: Ctx,
    value: string,
    slot: string,
    clientId: string,
    jkt: string | undefined,
    token: FoundRefreshToken,
    record: unknown,
  ): Promise<void> {
    const payload = record === undefined ? undefined : openGraceRecord(value, slot, record);
    const refusal = payload
      ? await this.refusal(ctx, payload, jkt, token)
      : record === undefined
        ? 'first_response_missing'
        : isFailureMarker(record)
          ? 'first_request_failed'
          : 'unreadable_record';

    if (!refusal && payload) {
      this.requests.set(ctx, { kind: 'repeat', payload, token });
      throw new RefreshGraceRepeat();
    }
    // The provider decides: the real error of a failed first request, or reuse detection.
    this.logger.info('refresh grace not applied', { client_id: clientId, reason: refusal, event: 'refresh_grace.skipped' });
    await this.resync(token, value);
  }

  /**
   * The provider read the token before this request waited: when the first refresh consumed it
   * meanwhile, the provider's own reuse detection must see that.
   */
  private async resync(token: FoundRefreshToken, value: string): Promise<void> {
    if (token.consumed) return;
    const now = (await this.provider.RefreshToken.find(value, { ignoreExpiration: true })) as FoundRefreshToken | undefined;
    if (!now) throw new errors.InvalidGrant('refresh token not found');
    if (now.consumed) token.consumed = now.consumed;
  }

  /**
   * Why the kept response must not be served to this request (undefined: serve it). The
   * provider has already authenticated the client, verified the proof (fresh, not replayed)
   * and the token's key binding, and found the grant alive.
   */
  private async refusal(ctx: Ctx, payload: GracePayload, jkt: string | undefined, token: FoundRefreshToken): Promise<string | undefined> {
    if (payload.clientId !== ctx.oidc.client!.clientId) return 'client_mismatch';
    if (payload.request !== requestFingerprint(ctx.oidc.params as Record<string, unknown>)) return 'different_request';
    if ((payload.jkt ?? null) !== (jkt ?? null)) return 'dpop_key_mismatch';
    // The pair is only worth repeating while its refresh token is unused and its grant alive.
    const successor = (await this.provider.RefreshToken.find(String(payload.body.refresh_token))) as FoundRefreshToken | undefined;
    if (!successor || successor.consumed || successor.grantId !== token.grantId) return 'successor_used_or_revoked';
    return undefined;
  }

  /** A served repeat: the kept response in place of the error that ended the grant handler. */
  private serve(ctx: Ctx, payload: GracePayload, token: FoundRefreshToken): void {
    const elapsed = Math.floor((Date.now() - payload.issuedAt) / 1000);
    const body = { ...payload.body };
    if (typeof body.expires_in === 'number') body.expires_in = Math.max(0, body.expires_in - elapsed);
    ctx.status = 200;
    ctx.body = body; // the token endpoint already set Cache-Control: no-store
    // Live tokens handed out again without a rotation: an operator must be able to see each one.
    audit(this.logger, 'refresh_grace.served', {
      client_id: payload.clientId,
      account: token.accountId,
      grant: token.grantId,
      dpop_jkt: payload.jkt,
      resource: typeof ctx.oidc.params?.resource === 'string' ? ctx.oidc.params.resource : undefined,
      seconds_since_first: elapsed,
      event: 'refresh_grace.served',
    });
    this.provider.emit('grant.success', ctx);
  }

  private async awaitRecord(slot: string, deadline: number): Promise<unknown> {
    const local = this.inFlight.get(slot);
    if (local) {
      const record = await within(local, Math.max(0, deadline - Date.now()));
      if (record !== undefined) return record;
    }
    for (;;) {
      let record: unknown;
      try {
        record = await this.kv.get(REFRESH_GRACE_NAMESPACE, `r:${slot}`);
      } catch (err) {
        this.logger.warn('refresh grace: store read failed', { detail: reason(err) });
        return undefined;
      }
      if (record !== undefined) return record;
      if (Date.now() >= deadline) return undefined;
      await sleep(this.pollMs);
    }
  }

  /** A refresh the checkpoint did not see: refused before it, or a provider that skipped it. */
  private async unchecked(ctx: Ctx): Promise<void> {
    const body = jsonBody(ctx);
    if (ctx.status === 200 && typeof body?.refresh_token === 'string') {
      this.logger.error(
        'refresh grace: a refresh was answered without passing its checkpoint in findAccount (an oidc-provider ' +
          'version whose refresh_token grant changed?): no grace window and no early resource check; ' +
          'set refreshTokens.reuseGraceSeconds to 0, or keep oidc-provider at a version this kit supports',
        { client_id: ctx.oidc.client?.clientId, event: 'refresh_grace.unchecked' },
      );
      return;
    }
    const value = ctx.oidc.params?.refresh_token;
    if (ctx.status === 400 && body?.error === 'invalid_grant' && ctx.oidc.client && typeof value === 'string' && value) {
      await revokeCrossClientReuse(this.provider, ctx, value, this.logger);
    }
  }
}
