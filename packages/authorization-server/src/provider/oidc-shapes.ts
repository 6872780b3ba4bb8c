/**
 * The oidc-provider types this package's public API shows, declared here as structural subsets so
 * the published declarations compile in users' projects without `@types/oidc-provider`: that
 * package pulls in `@types/koa`, which fails `skipLibCheck: false` next to express 5
 * (content-disposition's own types). The real objects satisfy these shapes; for oidc-provider's
 * full API, install `@types/oidc-provider` and cast (`as.provider as unknown as Provider`).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

export type { ClientMetadata } from '../config/types.js';

/** A record oidc-provider keeps through the store's adapter (a code, grant, session, client…). */
export interface AdapterPayload {
  [key: string]: unknown;
}

/** oidc-provider's storage adapter for one model ("Client", "Grant", "Session", …). */
export interface Adapter {
  upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<undefined | void>;
  find(id: string): Promise<AdapterPayload | undefined | void>;
  findByUserCode(userCode: string): Promise<AdapterPayload | undefined | void>;
  findByUid(uid: string): Promise<AdapterPayload | undefined | void>;
  consume(id: string): Promise<undefined | void>;
  destroy(id: string): Promise<undefined | void>;
  revokeByGrantId(grantId: string): Promise<undefined | void>;
}

/** A pending login or consent (oidc-provider `Interaction`). */
export interface OidcInteraction {
  uid: string;
  returnTo: string;
  /** The authorization request's parameters (`client_id`, `scope`, `login_hint`, …). */
  params: Record<string, unknown>;
  prompt: { name: string; reasons: string[]; details: Record<string, unknown> };
  session?: { accountId: string };
  grantId?: string;
}

/** What an interaction resolved to: `{ login: { accountId } }`, `{ consent: { grantId } }`, `{ error }`… */
export interface OidcInteractionResults {
  [key: string]: unknown;
}

/**
 * oidc-provider's `Provider` instance behind the AS: the interaction API (for custom login
 * steps), its events, and its client lookup.
 */
export interface OidcProvider {
  readonly issuer: string;
  interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<OidcInteraction>;
  interactionResult(
    req: IncomingMessage,
    res: ServerResponse,
    result: OidcInteractionResults,
    options?: { mergeWithLastSubmission?: boolean },
  ): Promise<string>;
  interactionFinished(
    req: IncomingMessage,
    res: ServerResponse,
    result: OidcInteractionResults,
    options?: { mergeWithLastSubmission?: boolean },
  ): Promise<void>;
  on(event: string, listener: (...args: any[]) => void): this;
  readonly Client: { find(id: string): Promise<object | undefined> };
}
