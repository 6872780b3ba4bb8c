import { describe, expect, it } from 'vitest';
import type { RunningAs } from './helpers/as.js';
import { startAsForDescribe } from './helpers/for-describe.js';

describe('discovery', () => {
  let t: RunningAs;
  startAsForDescribe({}, (started) => (t = started));

  it('RFC 8414 §3: /.well-known/oauth-authorization-server has the MCP-required fields', async () => {
    const res = await fetch(`${t.url}/.well-known/oauth-authorization-server`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    const m = (await res.json()) as Record<string, any>;
    expect(m.issuer).toBe(t.as.issuer);
    expect(m.code_challenge_methods_supported).toEqual(['S256']);
    expect(m.client_id_metadata_document_supported).toBe(true);
    expect(m.authorization_response_iss_parameter_supported).toBe(true);
    expect(m.registration_endpoint).toBe(`${t.as.issuer}/reg`);
    expect(m.revocation_endpoint).toBe(`${t.as.issuer}/token/revocation`);
    expect(m.introspection_endpoint).toBe(`${t.as.issuer}/token/introspection`);
    expect(m.response_types_supported).toContain('code');
    expect(m.grant_types_supported).toEqual(expect.arrayContaining(['authorization_code', 'refresh_token', 'client_credentials']));
    expect(m.scopes_supported).toEqual(expect.arrayContaining(['notes:read', 'notes:write', 'offline_access']));
    expect(m.token_endpoint_auth_methods_supported).toEqual(
      expect.arrayContaining(['none', 'client_secret_basic', 'client_secret_post', 'private_key_jwt']),
    );
  });

  it('MCP security §PKCE: OIDC discovery also lists code_challenge_methods_supported S256', async () => {
    const m = (await (await fetch(`${t.url}/.well-known/openid-configuration`)).json()) as Record<string, any>;
    expect(m.issuer).toBe(t.as.issuer);
    expect(m.code_challenge_methods_supported).toEqual(['S256']);
    expect(m.scopes_supported).toEqual(expect.arrayContaining(['notes:read', 'notes:write']));
  });

  it('OIDC Discovery 1.0 §3 + RFC 8414 §2: openid-configuration carries the same MCP-required fields as the RFC 8414 document', async () => {
    const res = await fetch(`${t.url}/.well-known/openid-configuration`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    const m = (await res.json()) as Record<string, any>;
    expect(m.issuer).toBe(t.as.issuer);
    expect(m.client_id_metadata_document_supported).toBe(true);
    expect(m.authorization_response_iss_parameter_supported).toBe(true);
    expect(m.code_challenge_methods_supported).toEqual(['S256']);
    expect(m.registration_endpoint).toBe(`${t.as.issuer}/reg`);
    expect(m.revocation_endpoint).toBe(`${t.as.issuer}/token/revocation`);
    expect(m.introspection_endpoint).toBe(`${t.as.issuer}/token/introspection`);
    expect(m.token_endpoint).toBe(`${t.as.issuer}/token`);
    expect(m.authorization_endpoint).toBe(`${t.as.issuer}/auth`);
    expect(m.response_types_supported).toEqual(['code']);
    const oauth = (await (await fetch(`${t.url}/.well-known/oauth-authorization-server`)).json()) as Record<string, any>;
    for (const field of [
      'issuer',
      'authorization_endpoint',
      'token_endpoint',
      'registration_endpoint',
      'revocation_endpoint',
      'introspection_endpoint',
      'jwks_uri',
      'code_challenge_methods_supported',
      'client_id_metadata_document_supported',
      'authorization_response_iss_parameter_supported',
      'token_endpoint_auth_methods_supported',
      'grant_types_supported',
      'scopes_supported',
      'dpop_signing_alg_values_supported',
    ]) {
      expect(m[field], field).toEqual(oauth[field]);
    }
  });

  it('RFC 7517: the JWKS publishes public keys only', async () => {
    const jwks = (await (await fetch(`${t.url}/jwks`)).json()) as { keys: Array<Record<string, unknown>> };
    expect(jwks.keys.length).toBeGreaterThan(0);
    for (const key of jwks.keys) {
      expect(key.d).toBeUndefined();
      expect(key.kid).toBeTypeOf('string');
    }
  });
});

describe('discovery for an issuer with a path', () => {
  let t: RunningAs;
  startAsForDescribe({ issuerPath: '/tenant1' }, (started) => (t = started));

  it('RFC 8414 §3.1: metadata at the path-inserted URL, issuer echoed exactly', async () => {
    const res = await fetch(`${t.url}/.well-known/oauth-authorization-server/tenant1`);
    expect(res.status).toBe(200);
    const m = (await res.json()) as Record<string, any>;
    expect(m.issuer).toBe(`${t.url}/tenant1`);
    expect(m.authorization_endpoint).toBe(`${t.url}/tenant1/auth`);
  });

  it('OIDC Discovery: path-inserted and path-appended openid-configuration', async () => {
    for (const url of [`${t.url}/.well-known/openid-configuration/tenant1`, `${t.url}/tenant1/.well-known/openid-configuration`]) {
      const res = await fetch(url);
      expect(res.status, url).toBe(200);
      expect(((await res.json()) as { issuer: string }).issuer).toBe(`${t.url}/tenant1`);
    }
  });

  it('OIDC Discovery 1.0 §4 + MCP authorization-server-discovery: path-inserted openid-configuration has the MCP-required fields under the path', async () => {
    const m = (await (await fetch(`${t.url}/.well-known/openid-configuration/tenant1`)).json()) as Record<string, any>;
    expect(m.client_id_metadata_document_supported).toBe(true);
    expect(m.authorization_response_iss_parameter_supported).toBe(true);
    expect(m.code_challenge_methods_supported).toEqual(['S256']);
    expect(m.registration_endpoint).toBe(`${t.url}/tenant1/reg`);
    expect(m.revocation_endpoint).toBe(`${t.url}/tenant1/token/revocation`);
    expect(m.introspection_endpoint).toBe(`${t.url}/tenant1/token/introspection`);
  });

  it('browser clients: the path-inserted metadata answers CORS requests', async () => {
    const res = await fetch(`${t.url}/.well-known/oauth-authorization-server/tenant1`, { headers: { origin: 'https://app.example' } });
    expect(['*', 'https://app.example']).toContain(res.headers.get('access-control-allow-origin'));
    const preflight = await fetch(`${t.url}/.well-known/oauth-authorization-server/tenant1`, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'GET' },
    });
    expect(preflight.status).toBeLessThan(300);
    expect(['*', 'https://app.example']).toContain(preflight.headers.get('access-control-allow-origin'));
  });

  it('RFC 8414 §3.1: the root well-known URL is not this issuer', async () => {
    const res = await fetch(`${t.url}/.well-known/oauth-authorization-server`);
    expect(res.status).toBe(404);
  });
});
