/** The minimum of OAuth a benchmark needs: PKCE, the code leg through a user agent, token requests. */
import { randomBytes } from 'node:crypto';
import { Agent, request } from 'node:http';
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

/**
 * Token requests go through node:http with a keep-alive agent, not `fetch`: the load driver shares
 * the machine's cores with what it measures (the AS, and PostgreSQL's server processes), and
 * undici's fetch cost about as much CPU per token request as the AS itself spent answering it
 * (bench/HISTORY.md, eleventh pass). The servers see the same requests either way.
 */
const agent = new Agent({ keepAlive: true });

export function tokenRequest(metadata, params) {
  const endpoint = new URL(metadata.token_endpoint);
  if (endpoint.protocol !== 'http:') throw new Error(`token endpoint: the bench driver speaks http only, not ${endpoint.protocol}`);
  const body = new URLSearchParams(params).toString();
  return new Promise((resolve, reject) => {
    const req = request(
      endpoint,
      {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        const chunks = [];
        res.on('data', (chunk) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          let json = {};
          try {
            json = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          } catch {
            // not JSON: reported below with the status
          }
          if (res.statusCode !== 200 || typeof json.access_token !== 'string') {
            reject(new Error(`token endpoint: HTTP ${res.statusCode} ${json.error ?? ''}`));
          } else resolve(json);
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
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
