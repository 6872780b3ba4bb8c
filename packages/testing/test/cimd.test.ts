import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startClientMetadataHost, startTestAuthorizationServer, type TestAuthorizationServer } from '@mcp-auth-kit/testing';

const RESOURCE = 'http://127.0.0.1:4200/mcp';
const REDIRECT = 'http://127.0.0.1/callback';

describe('Client ID Metadata Documents on a loopback HTTPS host', () => {
  let as: TestAuthorizationServer;
  beforeAll(async () => {
    as = await startTestAuthorizationServer({ resources: { [RESOURCE]: ['notes:read'] } });
  });
  afterAll(() => as?.close());

  it('MCP client registration §CIMD: the AS fetches the https client_id document and issues a token to that client', async () => {
    const host = await as.clientMetadataHost();
    expect(host.origin).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const clientId = host.publish('/clients/cli.json', { client_name: 'CIMD test client', redirect_uris: [REDIRECT] });
    const tokens = await as.authorize({ client: clientId });
    expect(tokens.claims.client_id).toBe(clientId);
    expect(tokens.claims.aud).toBe(RESOURCE);
    expect(host.fetchCount('/clients/cli.json')).toBeGreaterThanOrEqual(1);
  });

  it('MCP client registration §CIMD: a document without client_name is refused (invalid_client_metadata)', async () => {
    const host = await as.clientMetadataHost();
    const clientId = host.publish('/clients/nameless.json', { redirect_uris: [REDIRECT] });
    await expect(as.authorize({ client: clientId })).rejects.toMatchObject({ error: expect.stringMatching(/^invalid_client/) });
  });

  it('a redirect_uri absent from the document is refused (no open redirect)', async () => {
    const host = await as.clientMetadataHost();
    const clientId = host.publish('/clients/other-redirect.json', { client_name: 'x', redirect_uris: ['http://127.0.0.1/elsewhere'] });
    await expect(as.authorize({ client: { clientId, redirectUri: REDIRECT } })).rejects.toMatchObject({ error: 'invalid_redirect_uri' });
  });

  it('TLS: a host whose certificate the AS does not trust is refused (no token)', async () => {
    const untrusted = await startClientMetadataHost(); // its own self-signed certificate
    try {
      const clientId = untrusted.publish('/clients/untrusted.json', { client_name: 'x', redirect_uris: [REDIRECT] });
      await expect(as.authorize({ client: clientId })).rejects.toMatchObject({ error: 'invalid_client' });
      // Refused at the TLS handshake: the document was never requested.
      expect(untrusted.fetchCount('/clients/untrusted.json')).toBe(0);
    } finally {
      await untrusted.close();
    }
  });
});
