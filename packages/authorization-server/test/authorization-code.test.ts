import { describe, expect, it } from 'vitest';
import { decodeJwt, registerClient, RESOURCE, type RunningAs } from './helpers/as.js';
import { authorizeAuto, exchangeCode } from './helpers/flow.js';
import { startAsForDescribe } from './helpers/for-describe.js';

describe('authorization code flow (dev auto-login)', () => {
  let t: RunningAs;
  let clientId: string;
  startAsForDescribe({ devAutoLogin: 'alice' }, async (started) => {
    t = started;
    const reg = await registerClient(t.url);
    expect(reg.status).toBe(201);
    clientId = reg.body.client_id;
  });

  it('OAuth 2.1 §4.1 + RFC 9068: PKCE → code → JWT access token with aud = resource', async () => {
    const flow = await authorizeAuto(t.url, clientId);
    expect(flow.callback.searchParams.get('state')).toBe(flow.state);
    expect(flow.callback.searchParams.get('iss')).toBe(t.as.issuer);
    const token = await exchangeCode(t.url, clientId, flow);
    expect(token.status).toBe(200);
    const { header, payload } = decodeJwt(token.body.access_token);
    expect(header.typ).toBe('at+jwt');
    expect(header.alg).toBe('ES256');
    expect(payload.aud).toBe(RESOURCE);
    expect(payload.iss).toBe(t.as.issuer);
    expect(payload.client_id).toBe(clientId);
    expect(payload.scope).toBe('notes:read');
    expect(typeof payload.sub).toBe('string');
    expect(typeof payload.jti).toBe('string');
    expect(payload.exp - payload.iat).toBe(300);
    expect(token.body.refresh_token).toBeTypeOf('string');
  });
});
