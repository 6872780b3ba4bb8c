/**
 * Who is signed in to this AS in a browser: oidc-provider's session (its `_session` cookie, set by
 * the login page), when its account may still act (account-state.ts). The account page and the
 * connect pages ask this; the authorization endpoint asks oidc-provider itself.
 */
import type { Request, Response } from 'express';
import type Provider from 'oidc-provider';
import { usableAccount } from '../accounts/account-state.js';
import type { AccountRecord, Store } from '../storage/types.js';

export interface SignedIn {
  account: AccountRecord;
  /** The session's uid: stable for the session's life (its id changes at every new sign-in). */
  sessionUid: string;
  destroy(): Promise<void>;
}

export async function signedIn(
  provider: Provider,
  store: Store,
  server: { production?: boolean },
  req: Request,
  res: Response,
): Promise<SignedIn | undefined> {
  const session = await provider.Session.get(provider.createContext(req, res) as never);
  const accountId = session?.accountId;
  if (!accountId) return undefined;
  const account = await usableAccount(store, accountId, server);
  return account ? { account, sessionUid: String(session.uid), destroy: () => session.destroy() } : undefined;
}
