import { afterAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { protectedResourceMetadata } from '../src/core.js';
import { ConfigError, createResourceServer } from '../src/index.js';
import { makeApp, RESOURCE } from './helpers/harness.js';

const { app, rs } = makeApp({
  authorizationServers: ['http://localhost:9000', 'https://as2.example.com/tenant'],
  resourceName: 'Demo notes',
  resourceDocumentation: 'https://docs.example.com/notes',
});
afterAll(() => rs.close());

const PATH_URL = '/.well-known/oauth-protected-resource/mcp';
const ROOT_URL = '/.well-known/oauth-protected-resource';

describe('Protected Resource Metadata (RFC 9728)', () => {
  it.each([PATH_URL, ROOT_URL])('RFC 9728 §3: GET %s serves the document with every authorization server', async (url) => {
    const res = await request(app).get(url).expect(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.body).toEqual({
      resource: RESOURCE,
      authorization_servers: ['http://localhost:9000', 'https://as2.example.com/tenant'],
      scopes_supported: ['notes:read', 'notes:write'],
      bearer_methods_supported: ['header'],
      resource_name: 'Demo notes',
      resource_documentation: 'https://docs.example.com/notes',
    });
  });

  it('HEAD is answered like GET, without a body', async () => {
    const res = await request(app).head(PATH_URL).expect(200);
    expect(res.headers['access-control-allow-origin']).toBe('*');
  });

  it('OPTIONS is a CORS preflight (204, allow GET)', async () => {
    const res = await request(app)
      .options(PATH_URL)
      .set('Origin', 'https://browser-client.example')
      .set('Access-Control-Request-Method', 'GET')
      .set('Access-Control-Request-Headers', 'mcp-protocol-version')
      .expect(204);
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['access-control-allow-methods']).toContain('GET');
    expect(res.headers['access-control-allow-headers']).toBe('mcp-protocol-version');
  });

  it.each(['post', 'put', 'delete', 'patch'] as const)('%s → 405 with Allow', async (method) => {
    const res = await request(app)[method](ROOT_URL).expect(405);
    expect(res.headers.allow).toBe('GET, HEAD, OPTIONS');
    expect(res.body.error).toBe('invalid_request');
  });

  it('does not intercept other paths', async () => {
    await request(app).get('/.well-known/oauth-protected-resource/other').expect(404);
  });

  it('root document can be turned off (several resources on one host)', async () => {
    const solo = makeApp({ authorizationServers: ['http://localhost:9000'], serveRootMetadata: false });
    await request(solo.app).get(ROOT_URL).expect(404);
    await request(solo.app).get(PATH_URL).expect(200);
    await solo.rs.close();
  });

  it('resource at the host root: path-based and root URLs coincide', async () => {
    const root = createResourceServer({ resource: 'https://mcp.example.com', authorizationServers: ['https://as.example.com'] });
    expect(root.metadataUrl).toBe('https://mcp.example.com/.well-known/oauth-protected-resource');
    await root.close();
  });

  it('MCP §Refresh Tokens: offline_access is never in scopes_supported', () => {
    expect(() =>
      createResourceServer({
        resource: RESOURCE,
        authorizationServers: ['http://localhost:9000'],
        scopesSupported: ['a', 'offline_access'],
      }),
    ).toThrow(/offline_access/);
    expect(
      protectedResourceMetadata({ resource: RESOURCE, authorizationServers: ['x'], scopesSupported: ['a', 'offline_access'] })
        .scopes_supported,
    ).toEqual(['a']);
  });

  it('MCP §Authorization Server Location: at least one authorization server is required', () => {
    expect(() => createResourceServer({ resource: RESOURCE, authorizationServers: [] })).toThrow(/at least one/);
  });

  it.each(['mcp.example.com', 'https://mcp.example.com#frag', 'ftp://x/mcp', 'https://u:p@x/mcp'])(
    'MCP §Canonical Server URI: refuses resource %j at startup',
    (resource) => {
      expect(() => createResourceServer({ resource, authorizationServers: ['http://localhost:9000'] })).toThrow(ConfigError);
    },
  );

  it.each([['none'], ['HS256']])('refuses algorithm %j at startup (asymmetric only)', (alg) => {
    expect(() => createResourceServer({ resource: RESOURCE, authorizationServers: ['http://localhost:9000'], algorithms: [alg] })).toThrow(
      /not allowed/,
    );
  });
});
