/**
 * Signing in to the console, through the AS's own login page (local accounts, upstream
 * providers, the login brakes), like a connect page's sign-in (third-party/sign-in.ts): the
 * console starts an authorization request for the AS's own console client with `prompt=login`
 * and `max_age=0`, so every console sign-in is a fresh one; once oidc-provider has saved the
 * session and asks for consent, the interaction router drops the request (no Grant, code or
 * token is ever made for it) and sends the browser to its redirect URI, `<console>/signed-in`
 * (the console's path, `console.path`, is under the issuer's origin).
 */
import { randomBytes } from 'node:crypto';
import { pkceChallengeS256 } from '@mcp-auth-kit/protocol';
import type { ClientMetadata } from '../config/types.js';

/** The AS's own client for signing in to the console (not a client anyone can obtain tokens for). */
export const CONSOLE_CLIENT_ID = 'urn:mcp-auth-kit:console';
/** Where a console sign-in ends (and where an error response of it lands): `<console>/signed-in`. */
export const consoleSignedInUrl = (issuer: string, consolePath: string) => `${new URL(issuer).origin}${consolePath}/signed-in`;

/** The client's metadata among oidc-provider's static clients: public, web, redirect to our own path. */
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

/** The authorization request that shows the login page (PKCE of a verifier nobody keeps: no code is redeemed). */
export function consoleSignInUrl(issuer: string, consolePath: string): string {
  const url = new URL(`${issuer}/auth`);
  url.searchParams.set('client_id', CONSOLE_CLIENT_ID);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('redirect_uri', consoleSignedInUrl(issuer, consolePath));
  url.searchParams.set('scope', 'openid');
  url.searchParams.set('prompt', 'login');
  url.searchParams.set('state', randomBytes(16).toString('base64url'));
  url.searchParams.set('code_challenge', pkceChallengeS256(randomBytes(32).toString('base64url')));
  url.searchParams.set('code_challenge_method', 'S256');
  return url.href;
}

/** Whether an interaction is a console sign-in (never approved: see the interaction router). */
export function isConsoleSignIn(params: { client_id?: unknown }): boolean {
  return params.client_id === CONSOLE_CLIENT_ID;
}
