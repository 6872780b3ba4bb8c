/**
 * RFC 8707 §2.2 at the refresh: oidc-provider 9 rotates (consumes) the refresh token before it
 * resolves the `resource` parameter, so a refresh naming a resource the grant does not cover
 * answered `invalid_target` AND burnt the token — the client's next refresh then looked like a
 * replay and revoked the grant. The same rule, checked before anything is consumed.
 */
import { errors } from 'oidc-provider';

/** Throws `invalid_target` when `requested` cannot be served from the token's granted resources. */
export function checkRefreshResource(requested: unknown, granted: ReadonlySet<string> | undefined): void {
  if (requested === undefined || requested === null || requested === '') return;
  const list = Array.isArray(requested) ? requested : [requested];
  if (list.length > 1) {
    throw new errors.InvalidTarget('only a single resource indicator value must be requested/resolved during Access Token Request');
  }
  const [resource] = list;
  if (typeof resource !== 'string' || !granted?.has(resource)) throw new errors.InvalidTarget();
}
