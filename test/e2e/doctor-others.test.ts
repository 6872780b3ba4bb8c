import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchAsEndpoints, runCodeFlow } from '@mcp-auth-kit/testing';
import { checkDeployment, type DeploymentReport } from '@mcp-auth-kit/testing/doctor';
import { startOidcProvider, startResourceServer, type TestAs, type TestRs } from '../../packages/client/test/helpers/harness.js';
import { registerPublicClient } from '../helpers/registration.js';
import { startSdkExampleServer, type SdkExampleServer } from '../helpers/sdk-example-server.js';

const statuses = (report: DeploymentReport) => Object.fromEntries(report.findings.map((f) => [f.id, f.status]));
const REDIRECT = 'http://127.0.0.1:9/callback';

/** Issue 45: a bare oidc-provider as the AS in front of a tiny resource server built in the test. */
describe('doctor against a bare oidc-provider and a tiny resource server', () => {
  let as: TestAs;
  let rs: TestRs;
  beforeAll(async () => {
    rs = await startResourceServer(() => as.issuer, { basicScope: 'notes:read', writeScope: 'notes:write' });
    as = await startOidcProvider({ [rs.mcpUrl]: ['notes:read', 'notes:write'] });
  });
  afterAll(async () => {
    await rs?.close();
    await as?.close();
  });

  it('reports what each piece gets right and wrong', async () => {
    const endpoints = await fetchAsEndpoints(as.issuer);
    const clientId = await registerPublicClient(endpoints.registration_endpoint!, {
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      application_type: 'native',
    });
    const issued = await runCodeFlow({ endpoints, clientId, redirectUri: REDIRECT, scope: 'notes:read', resource: rs.mcpUrl });
    const report = await checkDeployment(rs.mcpUrl, {
      allowPrivate: true,
      token: issued.access_token,
      refresh: { refreshToken: issued.refresh_token!, clientId, issuer: as.issuer },
      scopeProbe: { method: 'tools/call', params: { name: 'write', arguments: {} } },
    });
    // oidc-provider gets the AS side right; the test's tiny RS checks tokens and scopes but not Origin
    // or CORS, and oidc-provider revokes the grant when a rotated refresh token comes again
    expect(statuses(report)).toEqual({
      ...Object.fromEntries(
        [
          'unauthenticated-401',
          'challenge-bearer',
          'challenge-resource-metadata',
          'challenge-scope',
          'challenge-no-error',
          'prm-found',
          'prm-well-known',
          'prm-resource',
          'prm-authorization-servers',
          'prm-scopes-supported',
          'as-metadata',
          'as-issuer',
          'as-pkce',
          'as-registration',
          'as-iss-parameter',
          'as-token-auth-methods',
          'as-grant-types',
          'as-dpop',
          'token-accepted',
          'token-audience-claim',
          'token-query-refused',
          'insufficient-scope',
          'refresh-rotation',
        ].map((id) => [id, 'pass']),
      ),
      'origin-refused': 'fail',
      'cors-metadata': 'warn',
      'cors-preflight': 'skip',
      'token-other-resource': 'skip',
      'refresh-retry': 'warn',
    });
    expect(report.findings.find((f) => f.id === 'origin-refused')?.section).toMatch(/Streamable HTTP §Security/);
    expect(report.findings.find((f) => f.id === 'refresh-retry')?.section).toMatch(/RFC 9700 §4\.14\.2/);
  });
});

/** Issue 45: the MCP SDK's own example server (simpleStreamableHttp --oauth) with its demo AS, as shipped in node_modules. */
describe("doctor against the MCP SDK's example server and demo authorization server", () => {
  let sdk: SdkExampleServer;
  beforeAll(async () => {
    sdk = await startSdkExampleServer();
  }, 30_000);
  afterAll(() => sdk?.close());

  it('reports what the example gets right and wrong', async () => {
    const issued = await sdk.tokens(sdk.mcpUrl);
    const other = await sdk.tokens('http://localhost:1/another-mcp');
    const report = await checkDeployment(sdk.mcpUrl, {
      allowPrivate: true,
      token: issued.access_token,
      otherResourceToken: other.access_token,
    });
    // the SDK 1.x example without --oauth-strict: no audience check, no Origin check, invalid_token
    // on a request without credentials, no scope in the challenge, no RFC 9207 `iss`
    expect(statuses(report)).toMatchObject({
      'unauthenticated-401': 'pass',
      'challenge-resource-metadata': 'pass',
      'challenge-scope': 'warn',
      'challenge-no-error': 'warn',
      'prm-resource': 'pass',
      'as-issuer': 'pass',
      'as-pkce': 'pass',
      'as-registration': 'pass',
      'as-iss-parameter': 'warn',
      'origin-refused': 'fail',
      'cors-metadata': 'pass',
      'token-accepted': 'pass',
      'token-audience-claim': 'skip',
      'token-other-resource': 'fail',
      'token-query-refused': 'pass',
    });
    const audience = report.findings.find((f) => f.id === 'token-other-resource')!;
    expect(audience.section).toMatch(/Token Audience Binding and Validation; RFC 8707 §2/);
    expect(audience.fix).toMatch(/audience/);
    expect(report.status).toBe('fail');
  });
});
