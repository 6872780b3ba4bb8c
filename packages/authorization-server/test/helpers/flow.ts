import { authorizeUrl, REDIRECT, RESOURCE, tokenRequest } from './as.js';
import { HeadlessBrowser, isUrl, pkcePair } from '@mcp-auth-kit/test-utils';

export interface CodeFlowResult {
  callback: URL;
  verifier: string;
  state: string;
}

/** Runs /auth with PKCE until the redirect URI (dev auto-login must be on). */
export async function authorizeAuto(
  issuer: string,
  clientId: string,
  extra: Record<string, string | undefined> = {},
  ua = new HeadlessBrowser(),
): Promise<CodeFlowResult> {
  const { verifier, challenge } = pkcePair();
  const state = Math.random().toString(36).slice(2);
  const result = await ua.follow(
    authorizeUrl(issuer, {
      client_id: clientId,
      response_type: 'code',
      redirect_uri: REDIRECT,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      scope: 'notes:read',
      resource: RESOURCE,
      state,
      ...extra,
    }),
    extra.redirect_uri ?? REDIRECT,
  );
  if (!isUrl(result)) throw new Error(`flow stopped at ${result.url} (${result.status}): ${result.body.slice(0, 300)}`);
  return { callback: result, verifier, state };
}

export async function exchangeCode(issuer: string, clientId: string, flow: CodeFlowResult, extra: Record<string, string> = {}) {
  return tokenRequest(issuer, {
    grant_type: 'authorization_code',
    code: flow.callback.searchParams.get('code') ?? '',
    redirect_uri: REDIRECT,
    code_verifier: flow.verifier,
    client_id: clientId,
    resource: RESOURCE,
    ...extra,
  });
}
