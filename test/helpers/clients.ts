/**
 * Pre-registered clients of an AS configuration (`authorizationServer.clients`) that never use
 * the front channel: no redirect URIs, no response types. `extra` sets or replaces any field.
 */

/** The JWT bearer grant type (RFC 7523 §2.1): ID-JAGs and the clients' own assertions. */
export const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

/** A confidential client that authenticates with its secret in HTTP Basic (RFC 6749 §2.3.1). */
export const secretClient = (client_id: string, client_secret: string, grant_types: string[], extra: Record<string, unknown> = {}) => ({
  client_id,
  client_secret,
  grant_types,
  response_types: [],
  redirect_uris: [],
  token_endpoint_auth_method: 'client_secret_basic',
  ...extra,
});

/** A machine client for `notes:read`; `extra` gives its grant types and how it authenticates. */
export const machineClient = (client_id: string, extra: Record<string, unknown>) => ({
  client_id,
  response_types: [],
  redirect_uris: [],
  scope: 'notes:read',
  ...extra,
});
