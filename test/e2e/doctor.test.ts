import { beforeAll, describe, expect, it } from 'vitest';
import { fetchAsEndpoints, runCodeFlow, type AsEndpoints } from '@mcp-auth-kit/testing';
import { checkDeployment, type DeploymentReport } from '@mcp-auth-kit/testing/doctor';
import { DEMO_SCOPES } from '@mcp-auth-kit/auth-server';
import { registerPublicClient } from '../helpers/registration.js';
import { useDemoStack } from '../helpers/stack.js';

const REDIRECT = 'http://127.0.0.1:9/callback';
const OTHER_RESOURCE = 'http://localhost:1/other-mcp';

/** Issue 45 "done when": doctor against our `npm start` stack (all pass), with every check that needs a token. */
describe('doctor against the demo stack (issue 45)', () => {
  const stack = useDemoStack({
    asConfig: (resource) => ({
      resources: [
        { resource, name: 'Demo notes', scopes: DEMO_SCOPES, defaultScopes: ['notes:read'] },
        { resource: OTHER_RESOURCE, name: 'Another server', scopes: { 'notes:read': '-' }, defaultScopes: ['notes:read'] },
      ],
    }),
  });
  let endpoints: AsEndpoints;
  let clientId: string;
  const tokens = async (resource: string) =>
    runCodeFlow({ endpoints, clientId, redirectUri: REDIRECT, scope: 'notes:read', resource, loginHint: 'demo' });

  beforeAll(async () => {
    endpoints = await fetchAsEndpoints(stack.issuer);
    clientId = await registerPublicClient(endpoints.registration_endpoint!, {
      client_name: 'doctor e2e',
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      application_type: 'native',
    });
  });

  const statuses = (report: DeploymentReport) => Object.fromEntries(report.findings.map((f) => [f.id, f.status]));

  it('without a token: every discovery, metadata and Origin check passes; the token checks are skipped', async () => {
    const report = await checkDeployment(stack.mcpUrl, { allowPrivate: true });
    expect(report.findings.filter((f) => f.status === 'fail' || f.status === 'warn')).toEqual([]);
    expect(statuses(report)).toMatchObject({
      'unauthenticated-401': 'pass',
      'challenge-resource-metadata': 'pass',
      'prm-resource': 'pass',
      'as-issuer': 'pass',
      'as-pkce': 'pass',
      'origin-refused': 'pass',
      'token-accepted': 'skip',
    });
    expect(report.status).toBe('pass');
  });

  it('with a token, a token for another resource, a write call and a refresh token: all pass, no token in the report', async () => {
    const issued = await tokens(stack.mcpUrl);
    const other = await tokens(OTHER_RESOURCE);
    expect(issued.refresh_token).toBeTypeOf('string');
    const report = await checkDeployment(stack.mcpUrl, {
      allowPrivate: true,
      token: issued.access_token,
      otherResourceToken: other.access_token,
      refresh: { refreshToken: issued.refresh_token!, clientId, issuer: stack.issuer },
      scopeProbe: { method: 'tools/call', params: { name: 'add_note', arguments: { text: 'from the doctor' } } },
      browserOrigin: new URL(stack.mcpUrl).origin,
    });
    expect(report.findings.filter((f) => f.status !== 'pass' && f.id !== 'as-dpop')).toEqual([]);
    for (const id of [
      'token-audience-claim',
      'token-other-resource',
      'token-query-refused',
      'insufficient-scope',
      'refresh-rotation',
      'refresh-retry',
    ]) {
      expect(statuses(report)[id], id).toBe('pass');
    }
    const text = JSON.stringify(report);
    for (const secret of [issued.access_token, issued.refresh_token!, other.access_token]) expect(text).not.toContain(secret);
    expect(text).toContain('[redacted]');
    expect(report.requests).toBeLessThanOrEqual(40);
  });

  it('refuses loopback without allowPrivate (SSRF rules of the client library): nothing is reached', async () => {
    const report = await checkDeployment(stack.mcpUrl);
    expect(report.findings[0]).toMatchObject({ id: 'unauthenticated-401', status: 'fail' });
    expect(report.findings[0]!.received).toMatch(/egress policy|https/);
  });
});
