import { describe, expect, it } from 'vitest';
import { createProviderFetch, providerFetchPurpose } from '../src/provider/provider-fetch.js';
import { silentLogger } from '../src/ops/logger.js';

/**
 * oidc-provider's one `fetch` option, routed by purpose (issue 40 item 2). The shapes are
 * oidc-provider 9's own (test/security/network-cache-inventory.test.ts pins them in its source);
 * the end-to-end attack is test/security/cimd-cache.attack.test.ts.
 */
describe('providerFetchPurpose', () => {
  it('a GET with redirect manual is a CIMD document request (fetched without following redirects)', () => {
    expect(providerFetchPurpose({ method: 'GET', redirect: 'manual' })).toBe('client_metadata');
  });

  it('a GET without it (or with follow) is a jwks_uri request, never a CIMD one', () => {
    expect(providerFetchPurpose({ method: 'GET' })).toBe('jwks_uri');
    expect(providerFetchPurpose({})).toBe('jwks_uri');
    expect(providerFetchPurpose({ method: 'get', redirect: 'follow' })).toBe('jwks_uri');
  });

  it('anything else (CIBA notification, back-channel logout: POST) has no purpose here', () => {
    expect(providerFetchPurpose({ method: 'POST', redirect: 'manual' })).toBeUndefined();
    expect(providerFetchPurpose({ method: 'PUT' })).toBeUndefined();
  });
});

describe('createProviderFetch', () => {
  const routed: string[] = [];
  const fetcher = (purpose: string) => async (url: string | URL) => {
    routed.push(`${purpose} ${String(url)}`);
    return new Response('{}', { status: 200 });
  };
  const fetch = createProviderFetch({ client_metadata: fetcher('client_metadata'), jwks_uri: fetcher('jwks_uri') }, silentLogger);

  it('hands each request to its purpose’s fetcher only', async () => {
    routed.length = 0;
    await fetch('https://app.example/client.json', { method: 'GET', redirect: 'manual' });
    await fetch('https://app.example/jwks.json', { method: 'GET' });
    expect(routed).toEqual(['client_metadata https://app.example/client.json', 'jwks_uri https://app.example/jwks.json']);
  });

  it('refuses a request without a purpose, reaching no fetcher', async () => {
    routed.length = 0;
    await expect(fetch('https://rp.example/logout', { method: 'POST', redirect: 'manual' })).rejects.toThrow(TypeError);
    expect(routed).toEqual([]);
  });
});
