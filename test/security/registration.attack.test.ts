import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  NATIVE_REDIRECT,
  REGISTERED_ERRORS,
  expectOAuthError,
  leaksInternals,
  postJson,
  startAttackStack,
  type AttackStack,
} from './helpers/support.js';

// Dynamic Client Registration attacks (RFC 7591 §3.2.2, §5; OAuth 2.1 §7.12.2; MCP security
// best practices §Open redirection), against the running AS.
describe('attack: dynamic client registration', () => {
  let stack: AttackStack;
  beforeAll(async () => {
    stack = await startAttackStack();
  });
  afterAll(async () => stack?.close());

  const register = (metadata: Record<string, unknown>) =>
    postJson(stack.metadata.registration_endpoint, {
      client_name: 'dcr attack',
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      ...metadata,
    });

  for (const uri of [
    'javascript:alert(document.cookie)',
    'JavaScript:alert(1)',
    ' javascript:alert(1)',
    'java\tscript:alert(1)',
    'data:text/html,<script>alert(1)</script>',
    'file:///etc/passwd',
    'vbscript:msgbox(1)',
    'blob:https://app.example.test/1',
  ]) {
    it(`RFC 7591 §3.2.2: dangerous redirect URI ${JSON.stringify(uri)} → invalid_redirect_uri, nothing registered`, async () => {
      const res = await register({ redirect_uris: [uri] });
      expect(res.status).toBe(400);
      expect(['invalid_redirect_uri', 'invalid_client_metadata']).toContain(res.body.error);
      expect(res.body.client_id).toBeUndefined();
      expect(leaksInternals(res.text)).toBe(false);
    });
  }

  it('a dangerous URI hidden among good ones → refused as a whole', async () => {
    const res = await register({ redirect_uris: [NATIVE_REDIRECT, 'javascript:alert(1)'] });
    expect(res.status).toBe(400);
    expect(res.body.client_id).toBeUndefined();
  });

  it('MCP §Communication security: a web client with a plain-http non-loopback redirect → refused', async () => {
    const res = await register({ application_type: 'web', redirect_uris: ['http://app.example.test/cb'] });
    expectOAuthError(res, 'invalid_redirect_uri');
  });

  it('a redirect URI with a fragment → refused (OAuth 2.1 §2.3)', async () => {
    const res = await register({ redirect_uris: ['http://127.0.0.1/callback#frag'] });
    expect(res.status).toBe(400);
    expect(REGISTERED_ERRORS.has(res.body.error as string)).toBe(true);
  });

  it('client_credentials by DCR (machine grant for anyone who can register) → invalid_client_metadata', async () => {
    const res = await register({ redirect_uris: [NATIVE_REDIRECT], grant_types: ['client_credentials'] });
    expectOAuthError(res, 'invalid_client_metadata');
  });

  it('oversized registration body (2 MiB) → 413 (or 400) with a JSON OAuth error, no 5xx, AS healthy afterwards', async () => {
    const res = await register({ redirect_uris: [NATIVE_REDIRECT], client_name: 'x'.repeat(2 * 1024 * 1024) });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(res.body.client_id).toBeUndefined();
    expect(leaksInternals(res.text)).toBe(false);
    const health = await fetch(`${stack.issuer}/.well-known/oauth-authorization-server`);
    expect(health.status).toBe(200);
  });

  it('thousands of redirect URIs → refused or bounded, never a 5xx', async () => {
    const uris = Array.from({ length: 5000 }, (_, i) => `http://127.0.0.1/cb${i}`);
    const res = await register({ redirect_uris: uris });
    expect(res.status).toBeLessThan(500);
    expect(leaksInternals(res.text)).toBe(false);
  });

  it('deeply nested JSON body → 4xx with an OAuth error, no 5xx', async () => {
    const nested = `${'['.repeat(5000)}${']'.repeat(5000)}`;
    const res = await postJson(stack.metadata.registration_endpoint, `{"redirect_uris":["${NATIVE_REDIRECT}"],"x":${nested}}`);
    expect(res.status).toBeLessThan(500);
    expect(leaksInternals(res.text)).toBe(false);
  });

  it('malformed JSON → 400 invalid_request / invalid_client_metadata without parser details', async () => {
    const res = await postJson(stack.metadata.registration_endpoint, '{"redirect_uris": [');
    expect(res.status).toBe(400);
    expect(REGISTERED_ERRORS.has(res.body.error as string)).toBe(true);
    expect(res.text).not.toMatch(/Unexpected end|SyntaxError|position/);
  });

  it('a client-supplied client_id / client_secret is never adopted (RFC 7591 §3.2.1: server-issued)', async () => {
    const res = await register({
      redirect_uris: [NATIVE_REDIRECT],
      client_id: 'chosen-by-attacker',
      token_endpoint_auth_method: 'client_secret_post',
      client_secret: 'chosen-by-attacker-secret',
    });
    if (res.status === 201) {
      expect(res.body.client_id).not.toBe('chosen-by-attacker');
      expect(res.body.client_secret).not.toBe('chosen-by-attacker-secret');
    } else expect(res.status).toBe(400);
  });
});
