import { describe, expect, it } from 'vitest';
import { configProblems } from './helpers/config.js';
import { ConfigError as SharedConfigError } from '@mcp-auth-kit/protocol';
import { ConfigError, validateConfig, type AuthorizationServerConfig } from '../src/config.js';
import { createAuthorizationServer } from '../src/server.js';
import { silentLogger } from '../src/ops/logger.js';

const valid: AuthorizationServerConfig = {
  issuer: 'http://localhost:9000',
  resources: [{ resource: 'http://localhost:3000/mcp', scopes: { 'notes:read': 'Read' } }],
  storage: { kind: 'memory' },
};

describe('configuration validation', () => {
  it('accepts a minimal valid configuration', () => {
    expect(configProblems(valid)).toEqual([]);
  });

  it('lists every problem at once', () => {
    const list = configProblems({ issuer: 'ftp://x', resources: [], storage: undefined, accessTokenTTL: -1 });
    expect(list.length).toBeGreaterThanOrEqual(4);
    expect(list.join('\n')).toMatch(/issuer/);
    expect(list.join('\n')).toMatch(/resources/);
    expect(list.join('\n')).toMatch(/storage/);
    expect(list.join('\n')).toMatch(/accessTokenTTL/);
  });

  it('RFC 8252 §7.1: redirectUris.extraSchemes takes lower-case single schemes, never http(s) or script/data/file schemes', () => {
    expect(configProblems({ ...valid, redirectUris: { extraSchemes: ['myhost', 'other-app'] } })).toEqual([]);
    const list = configProblems({ ...valid, redirectUris: { extraSchemes: ['https', 'javascript', 'My:Host', 7] } });
    expect(list).toHaveLength(4);
    for (const problem of list) expect(problem).toMatch(/^redirectUris\.extraSchemes: /);
    expect(configProblems({ ...valid, redirectUris: { extraSchemes: 'myhost' } })).toEqual([
      'redirectUris.extraSchemes: must be an array of URI schemes',
    ]);
  });

  it('MCP security §Communication: http issuers only on loopback; RFC 8414 §2: no query or fragment', () => {
    expect(configProblems({ ...valid, issuer: 'http://auth.example.com' }).join()).toMatch(/https/);
    expect(configProblems({ ...valid, issuer: 'https://auth.example.com?x=1' }).join()).toMatch(/query/);
    expect(configProblems({ ...valid, issuer: 'https://auth.example.com/' }).join()).toMatch(/"\/"/);
    expect(configProblems({ ...valid, issuer: 'https://auth.example.com/tenant' })).toEqual([]);
  });

  it('RFC 8707 §2: resources must be absolute URIs without fragment', () => {
    expect(configProblems({ ...valid, resources: [{ resource: '/mcp', scopes: { a: 'A' } }] }).join()).toMatch(/absolute/);
    expect(configProblems({ ...valid, resources: [{ resource: 'https://x.example/mcp#f', scopes: { a: 'A' } }] }).join()).toMatch(
      /fragment/,
    );
  });

  it('rejects reserved and malformed scope names and unknown default scopes', () => {
    const list = configProblems({
      ...valid,
      resources: [{ resource: 'https://x.example/mcp', scopes: { openid: 'x', 'bad scope': 'y' }, defaultScopes: ['nope'] }],
    }).join('\n');
    expect(list).toMatch(/reserved/);
    expect(list).toMatch(/valid scope token/);
    expect(list).toMatch(/defaultScopes/);
  });

  it('RFC 7662 §2.1/§4: introspectionClients name pre-registered clients that authenticate', () => {
    const resource = { resource: 'http://localhost:3000/mcp', scopes: { 'notes:read': 'Read' } };
    const clients = [
      { client_id: 'rs', client_secret: 'rs-secret-0123456789', grant_types: [], response_types: [], redirect_uris: [] },
      { client_id: 'public', token_endpoint_auth_method: 'none', redirect_uris: ['http://127.0.0.1/cb'] },
    ];
    expect(configProblems({ ...valid, clients, resources: [{ ...resource, introspectionClients: ['rs'] }] })).toEqual([]);
    const list = configProblems({ ...valid, clients, resources: [{ ...resource, introspectionClients: ['unknown', 'public'] }] }).join(
      '\n',
    );
    expect(list).toMatch(/introspectionClients: "unknown" is not a pre-registered client/);
    expect(list).toMatch(/introspectionClients: "public" is a public client/);
    expect(configProblems({ ...valid, resources: [{ ...resource, introspectionClients: 'rs' }] }).join()).toMatch(/must be an array/);
  });

  it('idJag (draft-ietf-oauth-identity-assertion-authz-grant): trusted IdPs need https, one key source, known clients, asymmetric algorithms', () => {
    const agent = {
      client_id: 'agent',
      client_secret: 'x'.repeat(32),
      grant_types: ['urn:ietf:params:oauth:grant-type:jwt-bearer'],
      response_types: [],
      redirect_uris: [],
    };
    const idp = { issuer: 'https://idp.example', jwksUri: 'https://idp.example/keys', clients: ['agent'] };
    expect(configProblems({ ...valid, clients: [agent], idJag: { trustedIdps: [idp] } })).toEqual([]);
    const list = configProblems({
      ...valid,
      clients: [agent],
      idJag: {
        trustedIdps: [
          {
            ...idp,
            issuer: 'http://idp.example',
            jwks: { keys: [{ kty: 'oct', k: 'secret' }] },
            clients: ['ghost'],
            algorithms: ['HS256'],
          },
          { ...idp, verifiedEmail: 'trusted', accountMatch: 'email' },
          idp,
        ],
        allowClients: ['everyone'],
        maxAgeSeconds: 0,
      },
    }).join('\n');
    expect(list).toMatch(/trustedIdps\[0\]\.issuer: must use https/);
    expect(list).toMatch(/trustedIdps\[0\]: set exactly one of jwksUri and jwks/);
    expect(list).toMatch(/trustedIdps\[0\]\.jwks: only public asymmetric keys/);
    expect(list).toMatch(/trustedIdps\[0\]\.clients: "ghost" is not a configured client/);
    expect(list).toMatch(/trustedIdps\[0\]\.algorithms: must list asymmetric JWS algorithms/);
    expect(list).toMatch(/trustedIdps\[1\]\.verifiedEmail: "trusted" needs emailDomains/);
    expect(list).toMatch(/trustedIdps\[2\]\.issuer: duplicate/);
    expect(list).toMatch(/idJag\.allowClients/);
    expect(list).toMatch(/idJag\.maxAgeSeconds/);
    expect(configProblems({ ...valid, idJag: { trustedIdps: [] } }).join('\n')).toMatch(/idJag\.trustedIdps: must list at least one/);
  });

  it('dev-only switches are refused unless the issuer host is loopback', () => {
    const remote = { ...valid, issuer: 'https://auth.example.com', devAutoLogin: 'demo', cimd: { allowPrivateNetwork: true } };
    const list = configProblems(remote).join('\n');
    expect(list).toMatch(/devAutoLogin: refused/);
    expect(list).toMatch(/allowPrivateNetwork: refused/);
    expect(configProblems({ ...valid, issuer: 'http://127.0.0.1:9000', devAutoLogin: 'demo' })).toEqual([]);
  });

  it('MCP security §Communication: pre-registered clients are checked at start-up, every problem listed', async () => {
    const error = await createAuthorizationServer({
      ...valid,
      logger: silentLogger,
      clients: [
        { client_id: 'a', redirect_uris: ['http://evil.example/cb'], token_endpoint_auth_method: 'none' },
        { client_id: 'b', redirect_uris: ['javascript:alert(1)'], token_endpoint_auth_method: 'none', application_type: 'native' },
        { client_id: 'ok', redirect_uris: ['https://app.example/cb'], token_endpoint_auth_method: 'none' },
      ],
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems;
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(/clients\[0\] \(a\): http redirect URIs are allowed only on loopback hosts/);
    expect(problems[1]).toMatch(/clients\[1\] \(b\): redirect URI scheme "javascript:" is not allowed/);
  });

  it('the ConfigError is the shared one from @mcp-auth-kit/protocol, listing every problem in its message', () => {
    expect(ConfigError).toBe(SharedConfigError);
    let error: unknown;
    try {
      validateConfig({ ...valid, issuer: 'not a url', resources: [] });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(SharedConfigError);
    expect(error).toMatchObject({ name: 'ConfigError', code: 'ERR_INVALID_CONFIG', subject: 'authorization server' });
    const { message, problems } = error as ConfigError;
    expect(problems.length).toBeGreaterThanOrEqual(2);
    expect(message).toBe(`Invalid authorization server configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  });

  it('createAuthorizationServer throws the ConfigError before opening storage', async () => {
    await expect(
      createAuthorizationServer({ ...valid, issuer: 'https://auth.example.com', devAutoLogin: 'demo', logger: silentLogger }),
    ).rejects.toThrow(/devAutoLogin: refused because the issuer host "auth.example.com" is not loopback/);
  });
});
