/**
 * Signing in to the operator console through the AS's own login page, the way the connect pages
 * do (third-party/sign-in.ts): an authorization request for the AS's own console client with
 * `prompt=login` (always a fresh sign-in: the console's changes need a recent one), which never
 * gets a code — the interaction router drops it once the user is signed in and sends the browser
 * to `<console>/signed-in`.
 */
import type { ClientMetadata } from '../config/types.js';
import { ownSignInUrl } from '../third-party/sign-in.js';

/** The AS's own client for the console's sign-in (no one can obtain tokens for it). */
export const CONSOLE_CLIENT_ID = 'urn:mcp-auth-kit:console';

export const consoleSignedInUrl = (issuer: string, consolePath: string) => `${issuer}${consolePath}/signed-in`;

export function consoleSignInClient(issuer: string, consolePath: string): ClientMetadata {
  return {
    client_id: CONSOLE_CLIENT_ID,
    client_name: 'Operator console',
    redirect_uris: [consoleSignedInUrl(issuer, consolePath)],
    grant_types: ['authorization_code'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
    application_type: 'web',
  };
}

/** The authorization request that shows the login page for the console (always a fresh sign-in). */
export function consoleSignInUrl(issuer: string, consolePath: string): string {
  return ownSignInUrl(issuer, CONSOLE_CLIENT_ID, consoleSignedInUrl(issuer, consolePath));
}

export function isConsoleSignIn(params: { client_id?: unknown }): boolean {
  return params.client_id === CONSOLE_CLIENT_ID;
}
