import { startClientMetadataHost, type ClientMetadataHost } from '@mcp-auth-kit/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  NATIVE_REDIRECT,
  authorizationUrl,
  expectOAuthError,
  frontChannel,
  fullFlow,
  pkcePair,
  postJson,
  startAttackStack,
  type AttackStack,
} from './helpers/support.js';

/**
 * Redirect-URI scheme allowlist (issue 19, finding 2). OS protocol-handler schemes used to be
 * accepted as "native" redirect URIs and the AS redirected the browser there with a code.
 * Rule: https, loopback http (RFC 8252 §7.3), private-use schemes in reverse domain name form
 * (RFC 8252 §7.1); everything else refused at registration (DCR, RFC 7592 update, CIMD) and at
 * authorization (a stored client carrying such a URI cannot be used).
 */
const HANDLER_SCHEMES = [
  'ms-msdt:/id PCWDiagnostic /skip force /param',
  'search-ms:query=x&crumb=location:\\\\attacker.example\\share',
  'ms-word:ofe|u|https://attacker.example/doc.docx',
  'jar:https://attacker.example/x.jar!/',
  'mhtml:https://attacker.example/x.mht',
  'intent://scan/#Intent;scheme=zxing;end',
  'x-javascript:alert(1)',
  'myapp:/callback',
];

describe('attack: OS protocol-handler redirect URIs (RFC 8252 §7.1, §7.3; OAuth 2.1 §7.12.2)', () => {
  let stack: AttackStack;
  let host: ClientMetadataHost;
  beforeAll(async () => {
    host = await startClientMetadataHost();
    stack = await startAttackStack({
      cimdAllowPrivateNetwork: true,
      authorizationServer: { cimd: { allowPrivateNetwork: true, extraCaCertificates: host.certificate.cert } },
    });
  });
  afterAll(async () => {
    await stack?.close();
    await host?.close();
  });

  const register = (redirect_uris: unknown[]) =>
    postJson(stack.metadata.registration_endpoint, {
      client_name: 'scheme attack',
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      redirect_uris,
    });

  for (const uri of HANDLER_SCHEMES) {
    it(`DCR (RFC 7591 §3.2.2): ${JSON.stringify(uri)} → invalid_redirect_uri, nothing registered`, async () => {
      const res = await register([uri]);
      expectOAuthError(res, 'invalid_redirect_uri');
      expect(res.body.client_id).toBeUndefined();
    });
  }

  it('RFC 7592 update: a registered client cannot switch its redirect URI to a handler scheme', async () => {
    const created = await register([NATIVE_REDIRECT]);
    expect(created.status).toBe(201);
    const { client_id, registration_client_uri, registration_access_token } = created.body as Record<string, string>;
    const res = await fetch(registration_client_uri!, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${registration_access_token}` },
      body: JSON.stringify({
        client_id,
        client_name: 'scheme attack',
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
        redirect_uris: ['ms-msdt:/id PCWDiagnostic'],
      }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toBe('invalid_redirect_uri');
  });

  it('CIMD: a document listing a handler scheme is refused; the browser is never sent there', async () => {
    const clientId = host.publish('/handler.json', { client_name: 'cimd scheme attack', redirect_uris: ['search-ms:query=x'] });
    const { challenge } = pkcePair();
    const result = await frontChannel(stack.issuer, authorizationUrl(stack, { clientId, challenge, redirectUri: 'search-ms:query=x' }));
    expect(result.kind).toBe('stopped');
    if (result.kind === 'stopped') expect(result.status).toBe(400);
  });

  it('authorization: a stored client carrying a handler scheme (registered before the rule) cannot be used', async () => {
    const clientId = 'legacy-handler-client';
    await stack.as.server.store.adapter('Client').upsert(clientId, {
      client_id: clientId,
      client_name: 'legacy',
      application_type: 'native',
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      redirect_uris: ['ms-msdt:/id PCWDiagnostic'],
    } as never);
    const { challenge } = pkcePair();
    const result = await frontChannel(
      stack.issuer,
      authorizationUrl(stack, { clientId, challenge, redirectUri: 'ms-msdt:/id PCWDiagnostic' }),
    );
    expect(result.kind).toBe('stopped');
    if (result.kind === 'stopped') expect(result.status).toBe(400);
  });

  it('legitimate: a reverse-domain private-use scheme registers, and the code comes back to it', async () => {
    const redirectUri = 'com.example.notes:/oauth2redirect';
    const res = await register([redirectUri]);
    expect(res.status).toBe(201);
    expect(res.body.application_type).toBe('native');
    const tokens = await fullFlow(stack, res.body.client_id as string, { redirectUri });
    expect(tokens.access_token).toBeTruthy();
  });

  it('operator extra scheme (redirectUris.extraSchemes): a trusted single-word scheme registers natively; others stay refused', async () => {
    const trusting = await startAttackStack({ authorizationServer: { redirectUris: { extraSchemes: ['myhost'] } } });
    try {
      const ok = await postJson(trusting.metadata.registration_endpoint, {
        client_name: 'desktop host',
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
        redirect_uris: ['myhost://oauth/callback'],
      });
      expect(ok.status).toBe(201);
      expect(ok.body.application_type).toBe('native');
      const refused = await postJson(trusting.metadata.registration_endpoint, {
        client_name: 'desktop host',
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
        redirect_uris: ['ms-msdt:/id PCWDiagnostic'],
      });
      expect(refused.status).toBe(400);
    } finally {
      await trusting.close();
    }
  });

  it('legitimate: loopback http on any port and https still register', async () => {
    expect((await register(['http://127.0.0.1:49152/callback'])).status).toBe(201);
    expect((await register(['http://[::1]/callback'])).status).toBe(201);
    expect((await register(['https://app.example.com/callback'])).status).toBe(201);
  });
});
