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
 *   once the new refresh token was itself used, the provider's reuse detection revokes the
 *   grant. A consumed token presented by ANOTHER client revokes the grant too (the token leaked).
 * - A first attempt that fails (e.g. `use_dpop_nonce`, `invalid_scope`) releases its claim, so
 *   the client's corrected retry becomes the protected first refresh; its waiters then take
 *   turns (each gets the provider's own answer, and a success is protected in turn).
 * - A `resource` the grant does not cover is refused (`invalid_target`) before the token is
 *   consumed (oidc-provider checks it only after rotating, which burnt the token).
 *
 * Mounted by wrapping oidc-provider's `refresh_token` grant handler, so the provider has
 * already parsed the body and authenticated the client (every method) when the grace applies.
 */
import type Provider from 'oidc-provider';
import { errors, type KoaContextWithOIDC } from 'oidc-provider';
import type { KeyValueStore } from './storage/types.js';
import type { Logger } from './logger.js';
import { audit } from './audit.js';
import { checkRefreshResource } from './refresh-grace/resource-check.js';
import { loadRefreshGrantInternals, type DpopResult, type RefreshGrantInternals } from './refresh-grace/oidc-internals.js';
import {
  graceSlot,
  isFailureMarker,
  openGraceRecord,
  sealGracePayload,
  type GracePayload,
  type GraceRecord,
} from './refresh-grace/sealed-response.js';

/** Default grace window in seconds (`refreshTokens.reuseGraceSeconds`). */
export const DEFAULT_REFRESH_REUSE_GRACE_SECONDS = 10;
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
/** The fields of oidc-provider's RefreshToken model read here. */
interface FoundRefreshToken {
  consumed?: unknown;
  clientId?: string;
  accountId?: string;
  grantId?: string;
  jkt?: string;
  'x5t#S256'?: string;
  resourceIndicators?: ReadonlySet<string>;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Resolves when `promise` settles or after `ms`, whichever comes first (no timer left behind). */
async function within(promise: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([promise, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** The parameters that shape a refresh response; a grace hit needs the same ones. */
function requestFingerprint(params: Record<string, unknown>): string {
  const resource = params.resource;
  return JSON.stringify([params.scope ?? null, Array.isArray(resource) ? [...resource].sort() : (resource ?? null)]);
}

function reason(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Wraps the provider's `refresh_token` grant with the grace window (and the early `resource`
 * check, which applies even with `graceSeconds` 0). Call once, after the provider is built and
 * before it serves.
 */
export async function installRefreshGrace(provider: Provider, options: RefreshGraceOptions): Promise<void> {
  const { kv, graceSeconds, logger } = options;
  const internals = await loadRefreshGrantInternals(provider);
  // A waiter that gives up falls through to reuse detection (a logout): wait as long as the window.
  const maxWaitMs = options.maxWaitMs ?? Math.min(graceSeconds * 1000, 10_000);
  const pollMs = options.pollMs ?? 25;
  // First requests in flight on this instance: a waiter here need not poll the store.
  const inFlight = new Map<string, Promise<void>>();
  const grace = new RefreshGrace(provider, internals, kv, graceSeconds, logger, maxWaitMs, pollMs, inFlight);
  provider.registerGrantType('refresh_token', (ctx) => grace.handle(ctx), internals.parameters, internals.dupes);
}

class RefreshGrace {
  constructor(
    private readonly provider: Provider,
    private readonly internals: RefreshGrantInternals,
    private readonly kv: KeyValueStore,
    private readonly graceSeconds: number,
    private readonly logger: Logger,
    private readonly maxWaitMs: number,
    private readonly pollMs: number,
    private readonly inFlight: Map<string, Promise<void>>,
  ) {}

  async handle(ctx: Ctx): Promise<void> {
    const value = ctx.oidc.params?.refresh_token;
    // Missing or malformed: the provider gives the right error.
    if (typeof value !== 'string' || !value) return this.internals.handler(ctx);
    const clientId = ctx.oidc.client!.clientId;

    const token = (await this.provider.RefreshToken.find(value, { ignoreExpiration: true })) as FoundRefreshToken | undefined;
    if (!token) return this.internals.handler(ctx);
    if (token.clientId !== clientId) {
      if (token.consumed) await this.revokeCrossClientReuse(ctx, token);
      return this.internals.handler(ctx); // "client mismatch"
    }
    checkRefreshResource(ctx.oidc.params?.resource, token.resourceIndicators);
    // mTLS-bound tokens are not used by this kit: leave them to the provider.
    if (!(this.graceSeconds > 0) || token['x5t#S256']) return this.internals.handler(ctx);

    const slot = graceSlot(value);
    const deadline = Date.now() + this.maxWaitMs;
    for (;;) {
      let claim: number;
      try {
        claim = await this.kv.increment(REFRESH_GRACE_NAMESPACE, `c:${slot}`, 1, this.graceSeconds);
      } catch (err) {
        this.logger.warn('refresh grace unavailable (store error): refreshing without it', { client_id: clientId, detail: reason(err) });
        return this.internals.handler(ctx);
      }
      if (claim === 1) return this.first(ctx, value, slot, clientId);
      const record = await this.awaitRecord(slot, deadline);
      // The first attempt failed and released its claim: take a turn (one at a time), so each
      // request gets the provider's own answer and a corrected retry is protected in turn.
      if (isFailureMarker(record) && Date.now() < deadline) {
        await sleep(this.pollMs);
        continue;
      }
      return this.repeat(ctx, value, slot, clientId, token, record);
    }
  }

  /** The first refresh of this token in the window: run it, keep its response sealed. */
  private async first(ctx: Ctx, value: string, slot: string, clientId: string): Promise<void> {
    let done!: () => void;
    this.inFlight.set(slot, new Promise<void>((resolve) => (done = resolve)));
    try {
      // An earlier attempt in this window may have failed (e.g. use_dpop_nonce): start clean.
      // Sent now but awaited only before this attempt's outcome is kept (which it must not
      // erase): the provider's own round trips need not wait for it.
      const cleared = this.kv.delete(REFRESH_GRACE_NAMESPACE, `r:${slot}`).catch(() => undefined);
      let payload: GracePayload | undefined;
      try {
        await this.internals.handler(ctx);
        const body = ctx.body;
        if (body && typeof body === 'object' && typeof (body as Record<string, unknown>).refresh_token === 'string') {
          // Already validated by the handler; the provider caches the result per request.
          const dPoP = await this.internals.validateDpop(ctx).catch(() => undefined);
          payload = {
            clientId,
            jkt: dPoP?.thumbprint,
            request: requestFingerprint(ctx.oidc.params as Record<string, unknown>),
            body: body as Record<string, unknown>,
            issuedAt: Date.now(),
          };
        }
      } finally {
        await cleared;
        await this.keep(slot, payload ? sealGracePayload(value, slot, payload) : { v: 1, failed: true }, clientId);
        // A failed attempt releases the claim: the client's corrected retry becomes the first.
        if (!payload) await this.kv.delete(REFRESH_GRACE_NAMESPACE, `c:${slot}`).catch(() => undefined);
      }
    } finally {
      this.inFlight.delete(slot);
      done();
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
  private async repeat(ctx: Ctx, value: string, slot: string, clientId: string, token: FoundRefreshToken, record: unknown): Promise<void> {
    const payload = record === undefined ? undefined : openGraceRecord(value, slot, record);
    const refusal = payload
      ? await this.refusal(ctx, payload, token)
      : record === undefined
        ? 'first_response_missing'
        : isFailureMarker(record)
          ? 'first_request_failed'
          : 'unreadable_record';

    if (refusal || !payload) {
      // The provider decides: the real error of a failed first request, or reuse detection.
      this.logger.info('refresh grace not applied', {
        client_id: clientId,
        reason: refusal ?? 'unreadable_record',
        event: 'refresh_grace.skipped',
      });
      return this.internals.handler(ctx);
    }

    const elapsed = Math.floor((Date.now() - payload.issuedAt) / 1000);
    const body = { ...payload.body };
    if (typeof body.expires_in === 'number') body.expires_in = Math.max(0, body.expires_in - elapsed);
    ctx.body = body; // the token endpoint already set Cache-Control: no-store
    // Live tokens handed out again without a rotation: an operator must be able to see each one.
    audit(this.logger, 'refresh_grace.served', {
      client_id: clientId,
      account: token.accountId,
      grant: token.grantId,
      dpop_jkt: payload.jkt,
      resource: typeof ctx.oidc.params?.resource === 'string' ? ctx.oidc.params.resource : undefined,
      seconds_since_first: elapsed,
      event: 'refresh_grace.served',
    });
  }

  /** Why the kept response must not be served to this request (undefined: serve it). */
  private async refusal(ctx: Ctx, payload: GracePayload, token: FoundRefreshToken): Promise<string | undefined> {
    if (payload.clientId !== ctx.oidc.client!.clientId) return 'client_mismatch';
    if (payload.request !== requestFingerprint(ctx.oidc.params as Record<string, unknown>)) return 'different_request';
    // Same proof-of-possession checks as the provider's own refresh, in its order.
    const dPoP: DpopResult | undefined = await this.internals.validateDpop(ctx);
    this.internals.checkDpopRequired(ctx, dPoP);
    if (token.jkt && token.jkt !== dPoP?.thumbprint) return 'dpop_key_mismatch';
    if ((payload.jkt ?? null) !== (dPoP?.thumbprint ?? null)) return 'dpop_key_mismatch';
    // The pair is only worth repeating while its refresh token is unused and its grant alive.
    const successor = (await this.provider.RefreshToken.find(String(payload.body.refresh_token))) as FoundRefreshToken | undefined;
    if (!successor || successor.consumed || successor.grantId !== token.grantId) return 'successor_used_or_revoked';
    const grant = token.grantId ? await this.provider.Grant.find(token.grantId) : undefined;
    if (!grant) return 'grant_revoked';
    // Last, so that a refusal leaves the proof to the provider's own replay check.
    if (dPoP) await this.internals.checkDpopReplay(ctx, dPoP, ctx.oidc.client!.clientId);
    return undefined;
  }

  private async awaitRecord(slot: string, deadline: number): Promise<unknown> {
    const local = this.inFlight.get(slot);
    if (local) await within(local, Math.max(0, deadline - Date.now()));
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

  /**
   * RFC 9700 §4.14.2: a rotated refresh token coming back means it leaked. oidc-provider only
   * says "client mismatch" when another client presents it; the grant is revoked here as well.
   */
  private async revokeCrossClientReuse(ctx: Ctx, token: FoundRefreshToken): Promise<void> {
    const grantId = token.grantId;
    if (!grantId) return;
    const { provider } = this;
    await Promise.all([
      provider.AccessToken.revokeByGrantId(grantId),
      provider.RefreshToken.revokeByGrantId(grantId),
      provider.AuthorizationCode.revokeByGrantId(grantId),
      provider.Grant.find(grantId).then((grant) => grant?.destroy()),
    ]);
    this.logger.warn('consumed refresh token presented by another client: grant revoked', {
      client_id: ctx.oidc.client?.clientId,
      owner_client_id: token.clientId,
      event: 'refresh_grace.cross_client_reuse',
    });
    provider.emit('grant.revoked', ctx, grantId);
    throw new errors.InvalidGrant('refresh token already used (presented by another client)');
  }
}
