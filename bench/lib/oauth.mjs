/** The minimum of OAuth a benchmark needs: PKCE, the code leg through a user agent, token requests. */
import { randomBytes } from 'node:crypto';
import { pkcePair } from '@mcp-auth-kit/test-utils';
import { UserAgent } from './user-agent.mjs';

export async function fetchMetadata(issuer) {
  const res = await fetch(`${issuer}/.well-known/oauth-authorization-server`);
  if (!res.ok) throw new Error(`AS metadata: HTTP ${res.status}`);
  const metadata = await res.json();
  if (metadata.issuer !== issuer) throw new Error(`AS metadata: issuer ${metadata.issuer} ≠ ${issuer}`);
  return metadata;
}

/** /authorize → (auto-login, auto-consent) → redirect with code; returns { code, verifier }. */
export async function obtainCode({ metadata, clientId, redirectUri, scope, resource, userAgent = new UserAgent() }) {
  const { verifier, challenge } = pkcePair();
  const state = randomBytes(12).toString('base64url');
  const url = new URL(metadata.authorization_endpoint);
  const params = {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: redirectUri,
    scope,
    resource,
    state,
    code_challenge: challenge,
    code_challenge_method: 'S256',
  };
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  const callback = await userAgent.follow(url, redirectUri);
  if (callback.searchParams.get('error')) throw new Error(`authorization response: ${callback.searchParams.get('error')}`);
  if (callback.searchParams.get('state') !== state) throw new Error('authorization response: state mismatch');
  if (callback.searchParams.get('iss') !== metadata.issuer) throw new Error('authorization response: iss mismatch');
  return { code: callback.searchParams.get('code'), verifier };
}

export async function tokenRequest(metadata, params) {
  const res = await fetch(metadata.token_endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: new URLSearchParams(params),
  });
  const body = await res.json().catch(() => ({}));
  if (!res.ok || typeof body.access_token !== 'string') throw new Error(`token endpoint: HTTP ${res.status} ${body.error ?? ''}`);
  return body;
}

export async function exchangeCode(metadata, { clientId, redirectUri, resource }, { code, verifier }) {
  return tokenRequest(metadata, {
    grant_type: 'authorization_code',
    client_id: clientId,
    code,
    redirect_uri: redirectUri,
    code_verifier: verifier,
    resource,
  });
}

/** Runs `task(i, worker)` for i in [0, count) with at most `concurrency` in flight (worker: 0…concurrency-1). */
export async function pool(count, concurrency, task) {
  let next = 0;
  const results = new Array(count);
  const worker = async (_, w) => {
    while (next < count) {
      const i = next++;
      results[i] = await task(i, w);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  return results;
}
