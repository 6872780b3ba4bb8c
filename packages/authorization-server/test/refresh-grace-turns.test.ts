/**
 * The refresh grace's checkpoint and middleware (src/tokens/refresh-grace.ts) driven directly, for the
 * path no HTTP test reaches: a first refresh that fails AFTER its claim (a store or signing
 * error once oidc-provider's checks passed), having consumed the token. A request that waited
 * on it takes its turn — and must see the token as the store has it now, so that the
 * provider's reuse detection applies (RFC 9700 §4.14.2), never a second rotation of a
 * consumed token.
 */
import { describe, expect, it } from 'vitest';
import { installRefreshGrace, REFRESH_GRACE_NAMESPACE, refreshGraceCheckpoint } from '../src/tokens/refresh-grace.js';
import type { Store } from '../src/storage/index.js';
import { graceSlot } from '../src/tokens/refresh-grace/sealed-response.js';
import { memoryStoreForDescribe } from './helpers/for-describe.js';

interface Token {
  kind: 'RefreshToken';
  clientId: string;
  grantId: string;
  consumed?: number;
}

type Middleware = (ctx: unknown, next: () => Promise<void>) => Promise<void>;

describe('refresh grace: a waiter taking its turn after a first refresh that failed after its claim', () => {
  let store: Store;
  memoryStoreForDescribe((opened) => (store = opened));

  it('RFC 9700 §4.14.2: the waiter re-reads the token, finds it consumed, and leaves it to reuse detection (no second rotation)', async () => {
    const value = 'rt-turns-0123456789';
    const stored: Token = { kind: 'RefreshToken', clientId: 'client-1', grantId: 'grant-1' };
    let middleware: Middleware | undefined;
    const provider = {
      use: (fn: Middleware) => {
        middleware = fn;
      },
      RefreshToken: { find: async () => ({ ...stored }) },
      emit: () => true,
    };
    const lines: string[] = [];
    const note = (message: string) => void lines.push(message);
    await installRefreshGrace(provider as never, {
      kv: store.kv,
      graceSeconds: 10,
      logger: { debug: note, info: note, warn: note, error: note },
      pollMs: 5,
    });
    const ctxOf = () => {
      const ctx: Record<string, unknown> = {
        get: () => '',
        oidc: {
          provider,
          route: 'token',
          client: { clientId: 'client-1' },
          params: { grant_type: 'refresh_token', refresh_token: value },
        },
      };
      return ctx;
    };

    // Both requests passed the provider's checks with the token still unconsumed in hand.
    const firstToken = { ...stored };
    const waiterToken = { ...stored };
    let releaseFirst!: () => void;
    const firstMayFail = new Promise<void>((resolve) => (releaseFirst = resolve));
    const firstCtx = ctxOf();
    const first = middleware!(firstCtx, async () => {
      await refreshGraceCheckpoint(firstCtx as never, firstToken);
      // The provider rotates: the token is consumed, then something fails before the response.
      stored.consumed = 1;
      await firstMayFail;
      firstCtx.status = 500;
      firstCtx.body = { error: 'server_error' };
    });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(await store.kv.get(REFRESH_GRACE_NAMESPACE, `c:${graceSlot(value)}`)).toBe(1);

    const waiterCtx = ctxOf();
    let providerSawConsumed: unknown;
    const waiter = middleware!(waiterCtx, async () => {
      await refreshGraceCheckpoint(waiterCtx as never, waiterToken);
      // What the provider's own consumed check reads next.
      providerSawConsumed = waiterToken.consumed;
      waiterCtx.status = 400;
      waiterCtx.body = { error: 'invalid_grant' };
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    releaseFirst();
    await Promise.all([first, waiter]);

    expect(providerSawConsumed).toBe(1);
    // The waiter did not become a protected first refresh: no claim left behind, the record says failed.
    expect(await store.kv.get(REFRESH_GRACE_NAMESPACE, `c:${graceSlot(value)}`)).toBeUndefined();
    expect(await store.kv.get(REFRESH_GRACE_NAMESPACE, `r:${graceSlot(value)}`)).toEqual({ v: 1, failed: true });
    expect(lines.join('\n')).not.toContain(value);
  });
});
