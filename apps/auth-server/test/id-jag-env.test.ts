import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';

describe('auth-server app: enterprise-managed authorization (ID-JAG) from the environment', () => {
  it('ID_JAG_ISSUER, ID_JAG_JWKS_URI, ID_JAG_CLIENTS, ID_JAG_ACCOUNT_MATCH make one trusted IdP', () => {
    const { config, problems } = loadConfig({
      ID_JAG_ISSUER: 'https://acme.okta.example',
      ID_JAG_JWKS_URI: 'https://acme.okta.example/oauth2/v1/keys',
      ID_JAG_CLIENTS: '*',
      ID_JAG_ACCOUNT_MATCH: 'email',
    });
    expect(problems).toEqual([]);
    expect(config.authorizationServer?.idJag?.trustedIdps).toEqual([
      { issuer: 'https://acme.okta.example', jwksUri: 'https://acme.okta.example/oauth2/v1/keys', clients: ['*'], accountMatch: 'email' },
    ]);
  });

  it('every problem is listed at start-up: no keys, no clients, a bad match, settings without an issuer', () => {
    const listed = loadConfig({ ID_JAG_ISSUER: 'http://idp.example', ID_JAG_ACCOUNT_MATCH: 'name' }).problems.join('\n');
    expect(listed).toMatch(/idJag\.trustedIdps\[0\]\.issuer: must use https/);
    expect(listed).toMatch(/set exactly one of jwksUri and jwks/);
    expect(listed).toMatch(/idJag\.trustedIdps\[0\]\.clients/);
    expect(listed).toMatch(/accountMatch: must be "subject" or "email"/);
    expect(loadConfig({ ID_JAG_CLIENTS: 'agent' }).problems).toContain(
      'ID_JAG_JWKS_URI, ID_JAG_CLIENTS and ID_JAG_ACCOUNT_MATCH need ID_JAG_ISSUER',
    );
  });
});
