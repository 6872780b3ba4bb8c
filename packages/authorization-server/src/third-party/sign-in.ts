/**
 * Signing in from a connect page, through the AS's own login page (local accounts, upstream
 * providers, the login brakes: every way a user signs in elsewhere). The login page belongs to an
 * authorization request, so the connect page starts one for the AS's own client, which never gets
 * a code: once oidc-provider has saved the signed-in session and asks for consent, the interaction
 * router ends the request and sends the browser back to `<issuer>/connect/signed-in`, which
 * returns to the ticket remembered in a cookie. No Grant, code or token is ever made for it.
 */
import { randomBytes } from 'node:crypto';
import { pkceChallengeS256 } from '@mcp-auth-kit/protocol';
import type { ClientMetadata } from '../config/types.js';

/** The AS's own client for signing in from a connect page (not a client anyone can obtain tokens for). */
export const CONNECT_CLIENT_ID = 'urn:mcp-auth-kit:connect';
/** Where the sign-in ends (and where an error response of it lands). */
export const SIGNED_IN_PATH = '/connect/signed-in';

/** The client's metadata among oidc-provider's static clients: public, web, redirect to our own path. */
export function connectSignInClient(issuer: string): ClientMetadata {
  return {
    client_id: CONNECT_CLIENT_ID,
    client_name: 'Connect an account',
    redirect_uris: [`${issuer}${SIGNED_IN_PATH}`],
    grant_types: ['authorization_code'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
    application_type: 'web',
  };
}

/**
 * The authorization request that shows the login page: `prompt=login` signs in again even over a
 * session (switching account); the PKCE challenge is of a verifier nobody keeps (no code is issued).
 */
export function signInUrl(issuer: string): string {
  return ownSignInUrl(issuer, CONNECT_CLIENT_ID, `${issuer}${SIGNED_IN_PATH}`);
}

/** A sign-in request of one of the AS's own clients (the connect pages', the console's) ending at `redirectUri`. */
export function ownSignInUrl(issuer: string, clientId: string, redirectUri: string): string {
  const url = new URL(`${issuer}/auth`);
  url.searchParams.set('client_id', clientId);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('redirect_uri', redirectUri);
  url.searchParams.set('scope', 'openid');
  url.searchParams.set('prompt', 'login');
  url.searchParams.set('state', randomBytes(16).toString('base64url'));
  url.searchParams.set('code_challenge', pkceChallengeS256(randomBytes(32).toString('base64url')));
  url.searchParams.set('code_challenge_method', 'S256');
  return url.href;
}

/** Whether an interaction is a connect page's sign-in (never approved: see the interaction router). */
export function isConnectSignIn(params: { client_id?: unknown }): boolean {
  return params.client_id === CONNECT_CLIENT_ID;
}
