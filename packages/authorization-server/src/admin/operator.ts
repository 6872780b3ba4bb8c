/**
 * Who is using the console (its pages and the JSON admin API): the account of oidc-provider's browser session (the `_session`
 * cookie the login page sets), when it may act at all (account-state.ts) and holds the admin
 * role; and whether its sign-in is fresh enough for a change (the session's `loginTs`, the
 * OpenID Connect `max_age` rule applied to the console's forms).
 */
import type { Request, Response } from 'express';
import type Provider from 'oidc-provider';
import { usableAccount } from '../accounts/account-state.js';
import type { AccountRecord, Store } from '../storage/types.js';

export interface Operator {
  account: AccountRecord;
  /** The session's uid: stable for the session's life; console form tokens are bound to it. */
  sessionUid: string;
  /** Epoch seconds of the sign-in that started the session. */
  loginTs: number;
  endSession(): Promise<void>;
}

export type OperatorLookup = { kind: 'none' } | { kind: 'not-admin'; account: AccountRecord } | { kind: 'operator'; operator: Operator };

export async function lookUpOperator(
  provider: Provider,
  store: Store,
  server: { production?: boolean },
  req: Request,
  res: Response,
): Promise<OperatorLookup> {
  const session = await provider.Session.get(provider.createContext(req, res) as never);
  const accountId = session?.accountId;
  if (!accountId) return { kind: 'none' };
  const account = await usableAccount(store, accountId, server);
  if (!account) return { kind: 'none' };
  if (account.admin !== true) return { kind: 'not-admin', account };
  return {
    kind: 'operator',
    operator: {
      account,
      sessionUid: String(session.uid),
      // No loginTs: not a sign-in of ours; never fresh (freshEnough).
      loginTs: typeof session.loginTs === 'number' ? session.loginTs : 0,
      endSession: () => session.destroy(),
    },
  };
}

/** A change needs a sign-in no older than `maxAgeSeconds` (OpenID Connect Core §3.1.2.1 `max_age`). */
export function freshEnough(operator: Operator, maxAgeSeconds: number, now = Date.now()): boolean {
  return operator.loginTs > 0 && Math.floor(now / 1000) - operator.loginTs <= maxAgeSeconds;
}
