/** What a test does with an issued token at the AS besides using it: revoke it, introspect it. */
import { AuthorizationFlowError, postForm, type AsEndpoints } from './code-flow.js';
import type { ResolvedClient } from './test-clients.js';

/**
 * RFC 7009 revocation. Refresh tokens (and their grant) are revoked; the AS's JWT access tokens
 * cannot be (rejects with error `unsupported_token_type`).
 */
export async function revokeToken(
  metadata: AsEndpoints,
  client: ResolvedClient,
  token: string,
  hint?: 'access_token' | 'refresh_token',
): Promise<void> {
  if (!metadata.revocation_endpoint) throw new Error('the AS advertises no revocation_endpoint');
  const res = await postForm(metadata.revocation_endpoint, client, { token, ...(hint && { token_type_hint: hint }) });
  if (res.status === 200) return;
  const body = (await res.json().catch(() => ({}))) as { error?: string };
  if (body.error === 'unsupported_token_type') {
    // RFC 7009 §2.2.1: the AS issues self-contained JWT access tokens and cannot revoke
    // them; they stay valid at resource servers until `exp` (use a short `lifetime`).
    throw new AuthorizationFlowError(
      'revocation endpoint: the AS cannot revoke JWT access tokens (unsupported_token_type); revoke the refresh token or use a short lifetime',
      body.error,
    );
  }
  throw new AuthorizationFlowError(`revocation endpoint: HTTP ${res.status} ${body.error ?? ''}`.trim(), body.error);
}

/** RFC 7662 introspection of a refresh token or a JWT access token (inactive once its grant is revoked). */
export async function introspectToken(metadata: AsEndpoints, client: ResolvedClient, token: string): Promise<Record<string, unknown>> {
  if (!metadata.introspection_endpoint) throw new Error('the AS advertises no introspection_endpoint');
  // RFC 7662 §4: the AS answers only the client a token was issued to (or the resource
  // server it is for), so by default ask as the client that holds the token.
  const res = await postForm(metadata.introspection_endpoint, client, { token });
  if (res.status !== 200) throw new Error(`introspection endpoint: HTTP ${res.status}`);
  return (await res.json()) as Record<string, unknown>;
}
