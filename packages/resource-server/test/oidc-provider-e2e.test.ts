import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import Provider, { errors } from 'oidc-provider';
import { exportJWK, generateKeyPair } from 'jose';
import { makeApp, RESOURCE, rpc, type TestApp } from './helpers/harness.js';

// A real oidc-provider (the engine of our authorization server) issuing RFC 9068 JWT access
// tokens via client_credentials + RFC 8707 resource: what the middleware must accept as is.
let server: Server;
let issuer: string;
let t: TestApp;

async function token(resource: string, scope: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${issuer}/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from('svc:svc-secret').toString('base64')}`,
    },
    body: new URLSearchParams({ grant_type: 'client_credentials', resource, scope }).toString(),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

beforeAll(async () => {
  server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: 'svc',
        client_secret: 'svc-secret',
        grant_types: ['client_credentials'],
        redirect_uris: [],
        response_types: [],
        id_token_signed_response_alg: 'ES256',
        scope: 'notes:read notes:write',
      },
    ],
    jwks: { keys: [{ ...(await exportJWK(privateKey)), kid: 'k1', alg: 'ES256', use: 'sig' }] as never },
    scopes: ['notes:read', 'notes:write'],
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => RESOURCE,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, indicator) => {
          if (indicator !== RESOURCE && indicator !== 'http://localhost:4000/mcp') throw new errors.InvalidTarget();
          return {
            scope: 'notes:read notes:write',
            audience: indicator,
            accessTokenFormat: 'jwt',
            accessTokenTTL: 300,
            jwt: { sign: { alg: 'ES256' } },
          };
        },
      },
    },
  });
  server.on('request', provider.callback());
  t = makeApp({ authorizationServers: [issuer], cache: false });
});
afterAll(async () => {
  await t.rs.close();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('end to end with a real oidc-provider 9 (JWT access tokens, RFC 9068)', () => {
  it('a token issued for this resource is accepted and its claims land in req.auth', async () => {
    const issued = await token(RESOURCE, 'notes:read');
    expect(issued.status, JSON.stringify(issued.body)).toBe(200);
    const access = issued.body.access_token as string;
    const res = await request(t.app).post('/mcp').set('Authorization', `Bearer ${access}`).send(rpc('tools/list')).expect(200);
    expect(res.body.auth).toMatchObject({ clientId: 'svc', scopes: ['notes:read'], resource: RESOURCE, extra: { iss: issuer } });
  });

  it('step-up: a notes:read token gets 403 for add_note; a notes:read notes:write token passes', async () => {
    const reader = (await token(RESOURCE, 'notes:read')).body.access_token as string;
    const denied = await request(t.app)
      .post('/mcp')
      .set('Authorization', `Bearer ${reader}`)
      .send(rpc('tools/call', { name: 'add_note' }))
      .expect(403);
    expect(denied.headers['www-authenticate']).toContain('scope="notes:read notes:write"');
    const writer = (await token(RESOURCE, 'notes:read notes:write')).body.access_token as string;
    await request(t.app)
      .post('/mcp')
      .set('Authorization', `Bearer ${writer}`)
      .send(rpc('tools/call', { name: 'add_note' }))
      .expect(200);
  });

  it('MCP §Token Handling: a token the same AS issued for another MCP server is refused (aud)', async () => {
    const issued = await token('http://localhost:4000/mcp', 'notes:read');
    expect(issued.status).toBe(200);
    const res = await request(t.app)
      .post('/mcp')
      .set('Authorization', `Bearer ${issued.body.access_token as string}`)
      .send(rpc('ping'))
      .expect(401);
    expect(res.body.error).toBe('invalid_token');
    expect(t.logs.at(-1)?.details?.reason).toBe('aud_mismatch');
  });
});
