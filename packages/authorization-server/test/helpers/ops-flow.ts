/**
 * One full, realistic flow for the ops tests (logs, metrics): DCR of a confidential client +
 * RFC 7592 read, authorization code with PKCE through the login page (a wrong password first)
 * and consent, code exchange, refresh, revocation, and a replayed refresh token. Returns every
 * secret it used so the tests can look for them.
 */
import { expect } from 'vitest';
import { REDIRECT, RESOURCE } from './as.js';
import { openAuthorization } from './flow.js';
import { HeadlessBrowser, isUrl, expectOAuthError } from '@mcp-auth-kit/test-utils';

export interface FlowSecrets {
  values: Record<string, string>;
}

async function form(url: string, params: Record<string, string>, auth: string, requestId?: string) {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: auth,
      ...(requestId ? { 'x-request-id': requestId } : {}),
    },
    body: new URLSearchParams(params),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: (text ? JSON.parse(text) : {}) as Record<string, any> };
}

export async function runFullFlow(base: string, password = 'alice-password'): Promise<FlowSecrets> {
  const values: Record<string, string> = {};

  // RFC 7591 registration of a confidential client, then an RFC 7592 read (rotates the token).
  const reg = await fetch(`${base}/reg`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-request-id': 'ops-flow-registration' },
    body: JSON.stringify({
      client_name: 'Ops Test Client',
      application_type: 'web',
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: 'client_secret_basic',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    }),
  });
  const client = (await reg.json()) as Record<string, string>;
  expect(reg.status, JSON.stringify(client)).toBe(201);
  values.client_secret = client.client_secret!;
  values.registration_access_token = client.registration_access_token!;
  const read = await fetch(`${base}/reg/${client.client_id}`, { headers: { authorization: `Bearer ${client.registration_access_token}` } });
  expect(read.status).toBe(200);
  const rotated = (await read.json()) as Record<string, string>;
  if (rotated.registration_access_token) values.registration_access_token_2 = rotated.registration_access_token;
  const basic = `Basic ${Buffer.from(`${encodeURIComponent(client.client_id!)}:${encodeURIComponent(client.client_secret!)}`).toString('base64')}`;
  values.basic_credentials = basic.slice('Basic '.length);

  // Authorization code + PKCE through the pages: a wrong password, then the right one, then consent.
  const ua = new HeadlessBrowser();
  const { page: login, verifier } = await openAuthorization(base, { client_id: client.client_id as string, state: 'ops-state' }, ua);
  values.code_verifier = verifier;
  if (isUrl(login)) throw new Error('expected the login page');
  const wrongPassword = 'wrong-Pa55word-ops';
  values.wrong_password = wrongPassword;
  values.password = password;
  const retry = await ua.submit(login, { username: 'alice', password: wrongPassword, action: 'login' }, REDIRECT);
  if (isUrl(retry)) throw new Error('a wrong password must not pass');
  const consent = await ua.submit(retry, { username: 'alice', password, action: 'login' }, REDIRECT);
  if (isUrl(consent)) throw new Error('expected the consent page');
  const callback = await ua.submit(consent, { action: 'approve' }, REDIRECT);
  if (!isUrl(callback)) throw new Error(`expected the redirect, got ${callback.status}`);
  values.code = callback.searchParams.get('code')!;
  expect(values.code).toBeTruthy();
  for (const [i, c] of ua.cookies.entries()) values[`cookie_${i}_${c.name}`] = c.value;

  const token = await form(
    `${base}/token`,
    { grant_type: 'authorization_code', code: values.code, redirect_uri: REDIRECT, code_verifier: verifier, resource: RESOURCE },
    basic,
    'ops-flow-token',
  );
  expect(token.status, JSON.stringify(token.body)).toBe(200);
  values.access_token = token.body.access_token;
  values.refresh_token = token.body.refresh_token;

  const refreshed = await form(
    `${base}/token`,
    { grant_type: 'refresh_token', refresh_token: values.refresh_token!, resource: RESOURCE },
    basic,
  );
  expect(refreshed.status, JSON.stringify(refreshed.body)).toBe(200);
  values.access_token_2 = refreshed.body.access_token;
  values.refresh_token_2 = refreshed.body.refresh_token;

  const revoked = await form(`${base}/token/revocation`, { token: values.refresh_token_2!, token_type_hint: 'refresh_token' }, basic);
  expect(revoked.status).toBe(200);
  // The first refresh token was rotated: presenting it again is refused (and logged).
  const replay = await form(
    `${base}/token`,
    { grant_type: 'refresh_token', refresh_token: values.refresh_token!, resource: RESOURCE },
    basic,
  );
  expectOAuthError(replay, 'invalid_grant', 400);
  return { values };
}
