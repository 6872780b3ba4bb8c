import { describe, expect, it } from 'vitest';
import { expectOAuthError } from '@mcp-auth-kit/test-utils';
import { decodeJwt, registerClient, RESOURCE, type RunningAs } from './helpers/as.js';
import { authorizeAuto, exchangeCode } from './helpers/flow.js';
import { startAsForDescribe } from './helpers/for-describe.js';

const OTHER = 'https://other.example/api';

describe('RFC 8707 resource indicators + RFC 9068 JWT access tokens', () => {
  let t: RunningAs;
  let clientId: string;
  startAsForDescribe(
    {
      devAutoLogin: 'alice',
      resources: [
        { resource: RESOURCE, scopes: { 'notes:read': 'Read notes', 'notes:write': 'Write notes' } },
        { resource: OTHER, scopes: { 'other:read': 'Read other' }, accessTokenTTL: 120 },
      ],
    },
    async (started) => {
      t = started;
      // MCP clients register with the scope of the first challenge (oidc-provider treats the registered scope of a client as an allowlist).
      clientId = (await registerClient(t.url, { scope: 'notes:read' })).body.client_id;
    },
  );

  it('RFC 8707 §2: unknown resource → invalid_target (error redirect with iss)', async () => {
    await expect(authorizeAuto(t.url, clientId, { resource: 'https://unknown.example/mcp' })).resolves.toSatisfy(
      (flow: { callback: URL }) =>
        flow.callback.searchParams.get('error') === 'invalid_target' && flow.callback.searchParams.get('iss') === t.as.issuer,
    );
  });

  it('RFC 8707 §2: a resource with a fragment or a relative URI → invalid_target', async () => {
    for (const resource of [`${RESOURCE}#frag`, '/mcp']) {
      const flow = await authorizeAuto(t.url, clientId, { resource });
      expect(flow.callback.searchParams.get('error'), resource).toBe('invalid_target');
    }
  });

  it('RFC 8707 §2 (oidc-provider compares resources as strings): the resource matches exactly — a trailing slash is another resource', async () => {
    const flow = await authorizeAuto(t.url, clientId, { resource: `${RESOURCE}/` });
    expect(flow.callback.searchParams.get('error')).toBe('invalid_target');
  });

  it('RFC 8707 §2.2: token request resource must be one that was granted', async () => {
    const flow = await authorizeAuto(t.url, clientId);
    const res = await exchangeCode(t.url, clientId, flow, { resource: OTHER });
    expectOAuthError(res, 'invalid_target', 400);
  });

  it('RFC 9068 §2.2: aud is the resource, scopes are filtered per resource', async () => {
    const flow = await authorizeAuto(t.url, clientId, { scope: 'notes:read other:read' });
    const res = await exchangeCode(t.url, clientId, flow);
    expect(res.status).toBe(200);
    const { payload } = decodeJwt(res.body.access_token);
    expect(payload.aud).toBe(RESOURCE);
    expect(payload.scope).toBe('notes:read');
  });

  it('RFC 8707: per-resource access token lifetime', async () => {
    const flow = await authorizeAuto(t.url, clientId, { resource: OTHER, scope: 'other:read' });
    const res = await exchangeCode(t.url, clientId, flow, { resource: OTHER });
    expect(res.status).toBe(200);
    const { payload } = decodeJwt(res.body.access_token);
    expect(payload.aud).toBe(OTHER);
    expect(payload.exp - payload.iat).toBe(120);
    expect(res.body.expires_in).toBe(120);
  });

  it('MCP step-up (oidc-provider treats the registered scope of a client as an allowlist): a client registered with notes:read can later obtain notes:write', async () => {
    const flow = await authorizeAuto(t.url, clientId, { scope: 'notes:read notes:write' });
    expect(flow.callback.searchParams.get('error')).toBeNull();
    const res = await exchangeCode(t.url, clientId, flow);
    expect(res.status).toBe(200);
    expect(decodeJwt(res.body.access_token).payload.scope).toBe('notes:read notes:write');
  });

  it('RFC 8707 §2: with several resources configured, an authorization request without resource → invalid_target', async () => {
    const flow = await authorizeAuto(t.url, clientId, { resource: undefined });
    expect(flow.callback.searchParams.get('error')).toBe('invalid_target');
    expect(flow.callback.searchParams.get('iss')).toBe(t.as.issuer);
    expect(flow.callback.searchParams.get('code')).toBeNull();
  });
});

describe('RFC 8707 default resource', () => {
  let t: RunningAs;
  let clientId: string;
  startAsForDescribe({ devAutoLogin: 'alice' }, async (started) => {
    t = started;
    clientId = (await registerClient(t.url)).body.client_id;
  });

  it('RFC 8707 §2: with exactly one resource configured, an omitted resource defaults to it', async () => {
    const flow = await authorizeAuto(t.url, clientId, { resource: undefined });
    const res = await exchangeCode(t.url, clientId, flow, { resource: undefined });
    expect(res.status).toBe(200);
    expect(decodeJwt(res.body.access_token).payload.aud).toBe(RESOURCE);
  });
});
