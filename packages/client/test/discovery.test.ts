import { createServer } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import {
  assertPkceS256,
  discoverAuthorizationServer,
  discoverProtectedResource,
  processAuthorizationServerMetadataResponse,
  processProtectedResourceMetadataResponse,
} from '../src/core.js';
import { ERR } from '../src/index.js';
import { close, listen } from './helpers/harness.js';

const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
const deps = { fetch: (i: string | URL | Request, init?: RequestInit) => fetch(i, init) };

/** A loopback server answering from a path → [status, body] table and logging the paths asked. */
async function routes(table: Record<string, [number, unknown] | ((base: string) => [number, unknown])>) {
  const seen: string[] = [];
  let base = '';
  const server = createServer((req, res) => {
    seen.push(req.url!);
    const entry = table[req.url!];
    const [status, body] = typeof entry === 'function' ? entry(base) : (entry ?? [404, { error: 'not_found' }]);
    if (status >= 300 && status < 400) {
      res.writeHead(status, { location: String(body) }).end();
      return;
    }
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  base = await listen(server);
  cleanups.push(() => close(server));
  return { base, seen };
}
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

describe('Protected Resource Metadata discovery (RFC 9728, MCP Authorization Server Discovery)', () => {
  it('processProtectedResourceMetadataResponse returns the document; resource kept exactly as published', async () => {
    const prm = await processProtectedResourceMetadataResponse(
      'https://h.example/mcp',
      json({ resource: 'https://h.example', authorization_servers: ['https://as.example'] }),
    );
    expect(prm.resource).toBe('https://h.example');
  });

  it('RFC 9728 §3.3: a PRM whose resource names another server is refused', async () => {
    await expect(
      processProtectedResourceMetadataResponse(
        'https://h.example/mcp',
        json({ resource: 'https://evil.example.com/mcp', authorization_servers: ['https://as.example'] }),
      ),
    ).rejects.toMatchObject({ code: ERR.PRM_RESOURCE_MISMATCH });
  });

  it('MCP: a PRM without authorization_servers is refused; malformed bodies are coded errors', async () => {
    await expect(
      processProtectedResourceMetadataResponse(
        'https://h.example/mcp',
        json({ resource: 'https://h.example/mcp', authorization_servers: [] }),
      ),
    ).rejects.toMatchObject({ code: ERR.PRM_INVALID });
    await expect(
      processProtectedResourceMetadataResponse('https://h.example/mcp', json({ authorization_servers: ['x'] })),
    ).rejects.toMatchObject({ code: ERR.PRM_INVALID });
    await expect(processProtectedResourceMetadataResponse('https://h.example/mcp', new Response('<html>'))).rejects.toMatchObject({
      code: ERR.PRM_INVALID,
    });
    await expect(processProtectedResourceMetadataResponse('https://h.example/mcp', json([1, 2]))).rejects.toMatchObject({
      code: ERR.PRM_INVALID,
    });
    await expect(processProtectedResourceMetadataResponse('https://h.example/mcp', json({}, 404))).rejects.toMatchObject({
      code: ERR.PRM_NOT_FOUND,
    });
    await expect(
      processProtectedResourceMetadataResponse(
        'https://h.example/mcp',
        json({ resource: 'https://h.example/mcp', authorization_servers: ['a'], scopes_supported: 'a b' }),
      ),
    ).rejects.toMatchObject({ code: ERR.PRM_INVALID });
  });

  it('tries path-based then root well-known when the challenge has no resource_metadata', async () => {
    const { base, seen } = await routes({
      '/.well-known/oauth-protected-resource': (b) => [200, { resource: `${b}/mcp`, authorization_servers: ['https://as.example'] }],
    });
    const { metadata, url } = await discoverProtectedResource(`${base}/mcp`, deps);
    expect(seen).toEqual(['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']);
    expect(metadata.resource).toBe(`${base}/mcp`);
    expect(url.pathname).toBe('/.well-known/oauth-protected-resource');
  });

  it('uses the challenge resource_metadata URL first', async () => {
    const { base, seen } = await routes({ '/prm': (b) => [200, { resource: `${b}/mcp`, authorization_servers: ['https://as.example'] }] });
    await discoverProtectedResource(`${base}/mcp`, deps, `${base}/prm`);
    expect(seen).toEqual(['/prm']);
  });

  it('a document failing validation is final: no fallback to another URL after a resource mismatch', async () => {
    const { base, seen } = await routes({
      '/prm': [200, { resource: 'https://evil.example.com/mcp', authorization_servers: ['https://as.example'] }],
    });
    await expect(discoverProtectedResource(`${base}/mcp`, deps, `${base}/prm`)).rejects.toMatchObject({ code: ERR.PRM_RESOURCE_MISMATCH });
    expect(seen).toEqual(['/prm']);
  });

  it('no PRM anywhere → MCP_AUTH_PRM_NOT_FOUND', async () => {
    const { base } = await routes({});
    await expect(discoverProtectedResource(`${base}/mcp`, deps)).rejects.toMatchObject({ code: ERR.PRM_NOT_FOUND });
  });

  it('Security Best Practices (SSRF): a resource_metadata URL that is not https/loopback is refused before any request', async () => {
    let called = false;
    const spy = {
      fetch: async () => {
        called = true;
        return new Response();
      },
    };
    await expect(discoverProtectedResource('https://h.example/mcp', spy, 'http://169.254.169.254/latest/meta-data')).rejects.toMatchObject({
      code: ERR.URL_FORBIDDEN,
    });
    await expect(discoverProtectedResource('https://h.example/mcp', spy, 'file:///etc/passwd')).rejects.toMatchObject({
      code: ERR.URL_FORBIDDEN,
    });
    expect(called).toBe(false);
  });

  it('Security Best Practices (SSRF): redirects are validated hop by hop', async () => {
    const { base } = await routes({ '/prm': [302, 'http://10.0.0.1/prm'] });
    await expect(discoverProtectedResource(`${base}/mcp`, deps, `${base}/prm`)).rejects.toMatchObject({ code: ERR.URL_FORBIDDEN });
  });
});

describe('Authorization Server Metadata discovery (RFC 8414, OIDC Discovery)', () => {
  it('RFC 8414 §3.3: metadata whose issuer differs from the identifier is rejected (exact string comparison)', async () => {
    const md = {
      issuer: 'https://honest.example',
      token_endpoint: 'https://honest.example/token',
      code_challenge_methods_supported: ['S256'],
    };
    await expect(processAuthorizationServerMetadataResponse('https://attacker.example', json(md))).rejects.toMatchObject({
      code: ERR.AS_ISSUER_MISMATCH,
    });
    await expect(processAuthorizationServerMetadataResponse('https://honest.example/', json(md))).rejects.toMatchObject({
      code: ERR.AS_ISSUER_MISMATCH,
    });
    await expect(processAuthorizationServerMetadataResponse('https://honest.example', json(md))).resolves.toMatchObject({
      issuer: 'https://honest.example',
    });
  });

  it('malformed metadata is a coded error', async () => {
    await expect(
      processAuthorizationServerMetadataResponse('https://a.example', json({ issuer: 'https://a.example' })),
    ).rejects.toMatchObject({ code: ERR.AS_METADATA_INVALID });
    await expect(processAuthorizationServerMetadataResponse('https://a.example', new Response('nope'))).rejects.toMatchObject({
      code: ERR.AS_METADATA_INVALID,
    });
  });

  it('Security Considerations §Authorization Code Protection: refuses when code_challenge_methods_supported is absent or lacks S256', () => {
    expect(() => assertPkceS256({ issuer: 'x' })).toThrowError(expect.objectContaining({ code: ERR.PKCE_NOT_SUPPORTED }));
    expect(() => assertPkceS256({ issuer: 'x', code_challenge_methods_supported: ['plain'] })).toThrowError(
      expect.objectContaining({ code: ERR.PKCE_NOT_SUPPORTED }),
    );
    expect(() => assertPkceS256({ issuer: 'x', code_challenge_methods_supported: ['S256'] })).not.toThrow();
  });

  it('path issuer: tries the three URLs in order and accepts the OIDC path-append document', async () => {
    const { base, seen } = await routes({
      '/tenant1/.well-known/openid-configuration': (b) => [
        200,
        { issuer: `${b}/tenant1`, token_endpoint: `${b}/t`, code_challenge_methods_supported: ['S256'] },
      ],
    });
    const md = await discoverAuthorizationServer(`${base}/tenant1`, deps);
    expect(md.issuer).toBe(`${base}/tenant1`);
    expect(seen).toEqual([
      '/.well-known/oauth-authorization-server/tenant1',
      '/.well-known/openid-configuration/tenant1',
      '/tenant1/.well-known/openid-configuration',
    ]);
  });

  it('path-less issuer: falls back from RFC 8414 to OIDC discovery', async () => {
    const { base, seen } = await routes({
      '/.well-known/openid-configuration': (b) => [
        200,
        { issuer: b, token_endpoint: `${b}/t`, code_challenge_methods_supported: ['S256'] },
      ],
    });
    await discoverAuthorizationServer(base, deps);
    expect(seen).toEqual(['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']);
  });

  it('a mismatching issuer at the first URL is final (the document MUST NOT be used)', async () => {
    const { base, seen } = await routes({
      '/.well-known/oauth-authorization-server': [200, { issuer: 'https://honest.example', token_endpoint: 'https://honest.example/t' }],
      '/.well-known/openid-configuration': (b) => [200, { issuer: b, token_endpoint: `${b}/t` }],
    });
    await expect(discoverAuthorizationServer(base, deps)).rejects.toMatchObject({ code: ERR.AS_ISSUER_MISMATCH });
    expect(seen).toEqual(['/.well-known/oauth-authorization-server']);
  });
});

describe('MCP 2025-03-26 servers without PRM (opt-in legacyDiscovery)', () => {
  it('off by default: a server without PRM is an error', async () => {
    const { McpAuthClient } = await import('../src/index.js');
    const { base } = await routes({});
    await expect(new McpAuthClient({ clientName: 'x' }).discover(`${base}/mcp`)).rejects.toMatchObject({ code: ERR.PRM_NOT_FOUND });
  });
  it('on: the server origin is the issuer, its metadata must still match and advertise S256', async () => {
    const { McpAuthClient } = await import('../src/index.js');
    const { base, seen } = await routes({
      '/.well-known/oauth-authorization-server': (b) => [
        200,
        { issuer: b, token_endpoint: `${b}/token`, code_challenge_methods_supported: ['S256'] },
      ],
    });
    const binding = await new McpAuthClient({ clientName: 'x', legacyDiscovery: true }).discover(`${base}/mcp`);
    expect(binding.issuer).toBe(base);
    expect(binding.resource).toBe(`${base}/mcp`);
    expect(seen).toEqual([
      '/.well-known/oauth-protected-resource/mcp',
      '/.well-known/oauth-protected-resource',
      '/.well-known/oauth-authorization-server',
    ]);
  });
});
