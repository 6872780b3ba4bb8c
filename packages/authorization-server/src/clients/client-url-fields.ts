/**
 * Client metadata that would make the authorization server fetch a URL the client chose. Kept
 * apart from the rest of the client policy: each field here is either refused or fetched only
 * through the egress policy (egress.ts).
 *
 * - `sector_identifier_uri` (OIDC Dynamic Client Registration §2, §5): only used for pairwise
 *   subject identifiers, which this server does not issue (subject type `public` only), yet
 *   oidc-provider fetches it while registering. Refused for every client: DCR, RFC 7592 update,
 *   CIMD document, configured client.
 * - `jwks_uri`: kept. MCP client registration lets CIMD clients use `private_key_jwt` with a JWKS
 *   URL (draft-ietf-oauth-client-id-metadata-document §6.2) and DCR clients may do the same; the
 *   key set is fetched on use, through the egress policy (public addresses only).
 * - `request_uri` / `request_uris`: nothing to refuse. oidc-provider 9 fetches no request object by
 *   reference (only pushed-request URNs are accepted) and does not recognise `request_uris`.
 */
import { errors } from 'oidc-provider';

export function refuseFetchedUrlFields(metadata: Record<string, unknown>): void {
  if (metadata.sector_identifier_uri !== undefined) {
    throw new errors.InvalidClientMetadata('sector_identifier_uri is not supported: this server issues no pairwise subject identifiers');
  }
}
