import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { startTestAuthorizationServer, startTestIdp } from '@mcp-auth-kit/testing';
import { SignJWT, decodeJwt, exportJWK, generateKeyPair } from 'jose';
import { expectOAuthError, postForm, postJson } from './helpers/support.js';

/**
 * The ID-JAG grant's client rules that need an operator switch (draft §8.1; MCP profile §5:
 * "If the MCP Client is not pre-registered … it can use its Client ID Metadata Document"):
 * metadata-document and DCR clients are refused unless `idJag.allowClients` names their
 * source, and then only as confidential clients; refresh tokens only with `idJag.refreshTokens`.
 */
const GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const RESOURCE = 'http://127.0.0.1:1/mcp';

describe('ID-JAG grant and CIMD clients (MCP profile §5: a CIMD client_id with private_key_jwt)', () => {
  async function cimdRun(allowClients: Array<'cimd'> | undefined) {
    const idp = await startTestIdp();
    const as = await startTestAuthorizationServer({
      resources: { [RESOURCE]: ['notes:read'] },
      config: {
        idJag: { trustedIdps: [{ issuer: idp.issuer, jwksUri: idp.jwksUri, clients: ['*'] }], ...(allowClients && { allowClients }) },
      },
    });
    try {
      const { privateKey, publicKey } = await generateKeyPair('ES256');
      const host = await as.clientMetadataHost();
      const clientId = host.publish(`/clients/agent-${randomUUID()}.json`, {
        client_name: 'CIMD agent',
        redirect_uris: ['http://127.0.0.1/callback'],
        grant_types: ['authorization_code', GRANT],
        token_endpoint_auth_method: 'private_key_jwt',
        token_endpoint_auth_signing_alg: 'ES256',
        jwks: { keys: [{ ...(await exportJWK(publicKey)), alg: 'ES256', use: 'sig' }] },
      });
      const clientAssertion = await new SignJWT({ jti: randomUUID() })
        .setProtectedHeader({ alg: 'ES256' })
        .setIssuer(clientId)
        .setSubject(clientId)
        .setAudience(as.issuer)
        .setIssuedAt()
        .setExpirationTime('1m')
        .sign(privateKey);
      const assertion = await idp.idJag({ sub: 'cimd-user', aud: as.issuer, client_id: clientId, resource: RESOURCE, scope: 'notes:read' });
      return await postForm(String(as.metadata.token_endpoint), {
        grant_type: GRANT,
        assertion,
        client_id: clientId,
        client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
        client_assertion: clientAssertion,
      });
    } finally {
      await as.close();
      await idp.close();
    }
  }

  it('refused (unauthorized_client) unless the operator allows CIMD clients', async () => {
    const res = await cimdRun(undefined);
    expect(res.body.error, res.text).toBe('unauthorized_client');
    expect(String(res.body.error_description)).toMatch(/clients identified by a metadata document may not use the JWT bearer grant/);
  });

  it("accepted with idJag.allowClients: ['cimd'] (confidential: private_key_jwt)", async () => {
    const res = await cimdRun(['cimd']);
    expect(res.status, res.text).toBe(200);
    expect(decodeJwt(String(res.body.access_token)).aud).toBe(RESOURCE);
  });
});

describe('ID-JAG grant: DCR clients and refresh tokens, when the operator turns them on', () => {
  it("idJag.allowClients: ['dynamic'] lets a confidential DCR client register for the grant and use it; a public one still cannot", async () => {
    const idp = await startTestIdp();
    const as = await startTestAuthorizationServer({
      resources: { [RESOURCE]: ['notes:read'] },
      config: { idJag: { trustedIdps: [{ issuer: idp.issuer, jwksUri: idp.jwksUri, clients: ['*'] }], allowClients: ['dynamic'] } },
    });
    try {
      const endpoint = String(as.metadata.registration_endpoint);
      const reg = await postJson(endpoint, {
        client_name: 'dcr agent',
        redirect_uris: ['http://127.0.0.1/callback'],
        grant_types: ['authorization_code', GRANT],
        token_endpoint_auth_method: 'client_secret_basic',
      });
      expect(reg.status, reg.text).toBe(201);
      const clientId = String(reg.body.client_id);
      const assertion = await idp.idJag({ sub: 'u1', aud: as.issuer, client_id: clientId, resource: RESOURCE, scope: 'notes:read' });
      const res = await postForm(
        String(as.metadata.token_endpoint),
        { grant_type: GRANT, assertion },
        {
          authorization: `Basic ${Buffer.from(`${clientId}:${String(reg.body.client_secret)}`).toString('base64')}`,
        },
      );
      expect(res.status, res.text).toBe(200);
      const publicReg = await postJson(endpoint, {
        client_name: 'public agent',
        redirect_uris: ['http://127.0.0.1/callback'],
        grant_types: ['authorization_code', GRANT],
        token_endpoint_auth_method: 'none',
      });
      expectOAuthError(publicReg, 'invalid_client_metadata');
    } finally {
      await as.close();
      await idp.close();
    }
  });

  it('idJag.refreshTokens: a refresh token for a client registered with refresh_token, and it refreshes', async () => {
    const idp = await startTestIdp();
    const secret = 'agent-secret-0123456789abcdef';
    const as = await startTestAuthorizationServer({
      resources: { [RESOURCE]: ['notes:read'] },
      clients: [
        {
          client_id: 'agent',
          client_secret: secret,
          grant_types: [GRANT, 'refresh_token'],
          response_types: [],
          redirect_uris: [],
          token_endpoint_auth_method: 'client_secret_basic',
        },
      ],
      config: { idJag: { trustedIdps: [{ issuer: idp.issuer, jwksUri: idp.jwksUri, clients: ['agent'] }], refreshTokens: true } },
    });
    try {
      const basic = { authorization: `Basic ${Buffer.from(`agent:${secret}`).toString('base64')}` };
      const assertion = await idp.idJag({ sub: 'u2', aud: as.issuer, client_id: 'agent', resource: RESOURCE, scope: 'notes:read' });
      const res = await postForm(String(as.metadata.token_endpoint), { grant_type: GRANT, assertion }, basic);
      expect(res.status, res.text).toBe(200);
      expect(typeof res.body.refresh_token).toBe('string');
      const refreshed = await postForm(
        String(as.metadata.token_endpoint),
        { grant_type: 'refresh_token', refresh_token: String(res.body.refresh_token), resource: RESOURCE },
        basic,
      );
      expect(refreshed.status, refreshed.text).toBe(200);
      expect(decodeJwt(String(refreshed.body.access_token))).toMatchObject({ aud: RESOURCE, scope: 'notes:read', client_id: 'agent' });
    } finally {
      await as.close();
      await idp.close();
    }
  });

  it("the IdP's JWKS unreachable → temporarily_unavailable (not a verdict on the assertion), and the jti stays unused", async () => {
    const idp = await startTestIdp();
    const secret = 'agent-secret-0123456789abcdef';
    const client = { client_id: 'agent', client_secret: secret, grant_types: [GRANT], response_types: [], redirect_uris: [] };
    const as = await startTestAuthorizationServer({
      resources: { [RESOURCE]: ['notes:read'] },
      clients: [client],
      config: { idJag: { trustedIdps: [{ issuer: idp.issuer, jwksUri: `${idp.issuer}/no-such-jwks`, clients: ['agent'] }] } },
    });
    try {
      const assertion = await idp.idJag({ sub: 'u3', aud: as.issuer, client_id: 'agent', resource: RESOURCE, scope: 'notes:read' });
      const res = await postForm(
        String(as.metadata.token_endpoint),
        { grant_type: GRANT, assertion },
        {
          authorization: `Basic ${Buffer.from(`agent:${secret}`).toString('base64')}`,
        },
      );
      expect(res.body.error, res.text).toBe('temporarily_unavailable');
      expect(String(res.body.error_description)).toMatch(/keys could not be obtained/);
    } finally {
      await as.close();
      await idp.close();
    }
  });
});
