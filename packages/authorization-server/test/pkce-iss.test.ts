import { describe, expect, it } from 'vitest';
import { CONFIDENTIAL_WEB_CLIENT, authorizeUrl, REDIRECT, registerClient, RESOURCE, type RunningAs } from './helpers/as.js';
import { authorizeAuto, exchangeCode, codeAuthorizeUrl } from './helpers/flow.js';
import { HeadlessBrowser, isUrl, pkcePair, expectOAuthError } from '@mcp-auth-kit/test-utils';
import { startAsForDescribe } from './helpers/for-describe.js';

describe('PKCE (OAuth 2.1 §4.1.1, MCP security §PKCE) and RFC 9207 iss', () => {
  let t: RunningAs;
  let clientId: string;
  let confidential: { client_id: string; client_secret: string };
  startAsForDescribe({ devAutoLogin: 'alice' }, async (started) => {
    t = started;
    clientId = (await registerClient(t.url)).body.client_id;
    const reg = await registerClient(t.url, CONFIDENTIAL_WEB_CLIENT);
    confidential = reg.body as typeof confidential;
  });

  async function authorizeError(params: Record<string, string | undefined>) {
    const result = await new HeadlessBrowser().follow(
      authorizeUrl(t.url, {
        client_id: clientId,
        response_type: 'code',
        redirect_uri: REDIRECT,
        scope: 'notes:read',
        resource: RESOURCE,
        state: 's1',
        ...params,
      }),
      REDIRECT,
    );
    if (!isUrl(result)) throw new Error(`no redirect: ${result.status}`);
    return result.searchParams;
  }

  it('OAuth 2.1 §4.1.1: missing code_challenge → invalid_request (with iss, RFC 9207 §2)', async () => {
    const p = await authorizeError({});
    expect(p.get('error')).toBe('invalid_request');
    expect(p.get('iss')).toBe(t.as.issuer);
    expect(p.get('state')).toBe('s1');
    expect(p.get('code')).toBeNull();
  });

  it('OAuth 2.1 §4.1.1: code_challenge_method=plain → invalid_request', async () => {
    const { verifier } = pkcePair();
    const p = await authorizeError({ code_challenge: verifier, code_challenge_method: 'plain' });
    expect(p.get('error')).toBe('invalid_request');
    expect(p.get('iss')).toBe(t.as.issuer);
  });

  it('OAuth 2.1 §4.1.1: PKCE is required for confidential clients too', async () => {
    const result = await new HeadlessBrowser().follow(
      authorizeUrl(t.url, {
        client_id: confidential.client_id,
        response_type: 'code',
        redirect_uri: REDIRECT,
        scope: 'notes:read',
        resource: RESOURCE,
        state: 'x',
      }),
      REDIRECT,
    );
    expect(isUrl(result) && result.searchParams.get('error')).toBe('invalid_request');
  });

  it('RFC 7636 §4.6: a wrong code_verifier at the token endpoint → invalid_grant', async () => {
    const flow = await authorizeAuto(t.url, clientId);
    const res = await exchangeCode(t.url, clientId, { ...flow, verifier: pkcePair().verifier });
    expectOAuthError(res, 'invalid_grant', 400);
    expect(res.body.access_token).toBeUndefined();
  });

  it('RFC 9207 §2: success responses carry iss equal to the issuer', async () => {
    const flow = await authorizeAuto(t.url, clientId);
    expect(flow.callback.searchParams.get('iss')).toBe(t.as.issuer);
    expect(flow.callback.searchParams.get('code')).toBeTruthy();
  });

  it('OAuth 2.1 §4.1.3: an authorization code is single-use', async () => {
    const flow = await authorizeAuto(t.url, clientId);
    expect((await exchangeCode(t.url, clientId, flow)).status).toBe(200);
    const again = await exchangeCode(t.url, clientId, flow);
    expectOAuthError(again, 'invalid_grant', 400);
  });

  it('MCP security §Open redirection: unregistered redirect_uri is never redirected to', async () => {
    const { challenge } = pkcePair();
    const result = await new HeadlessBrowser().follow(
      codeAuthorizeUrl(t.url, challenge, { client_id: clientId, redirect_uri: 'https://attacker.example/cb' }),
      'https://attacker.example',
    );
    expect(isUrl(result)).toBe(false);
    if (!isUrl(result)) {
      expect(result.status).toBe(400);
      expect(result.body).toContain('redirect_uri');
      expect(result.body).not.toMatch(/at .*\.js:\d+/);
    }
  });
});
