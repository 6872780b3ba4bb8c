/**
 * Official MCP conformance suite (`conformance authorization`) against our authorization
 * server with DEV_AUTO_LOGIN: scenarios authorization-server-metadata-endpoint and
 * authorization-code-grant, with and without `--resource` (RFC 8707).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAuthServer, type RunningAuthServer } from '@mcp-auth-kit/auth-server';
import { silentLogger } from '@mcp-auth-kit/authorization-server';
import { node22, unavailableNode22 } from '../helpers/node22.js';
import { freePort } from '@mcp-auth-kit/test-utils';
import { runAuthorizationConformance, type CliResult } from './as/run-cli.js';
import { registerPublicClient } from '../helpers/registration.js';

const node = await node22();
const skip = unavailableNode22('the conformance CLI (authorization-server scenarios)', node);

const EXPECTED = ['authorization-server-metadata', 'authorization-server-metadata-cimd', 'authorization-code-grant'];

function expectAllPassed(result: CliResult) {
  const summary = result.checks.map((c) => `${c.id}:${c.status}${c.errorMessage ? ` (${c.errorMessage})` : ''}`);
  expect(result.checks.map((c) => c.id).sort(), result.stdout).toEqual([...EXPECTED].sort());
  expect(
    result.checks.every((c) => c.status === 'SUCCESS'),
    `${summary.join(', ')}\n${result.browserTrace.join('\n')}`,
  ).toBe(true);
  expect(result.stdout).toMatch(/Total: 3 passed, 0 failed/);
  expect(result.exitCode).toBe(0);
}

describe.skipIf(skip)('official conformance: conformance authorization', () => {
  let as: RunningAuthServer;
  const resource = 'http://localhost:3000/mcp';

  beforeAll(async () => {
    as = await startAuthServer({ port: 0, devAutoLogin: 'demo', storage: { kind: 'memory' }, resource, logger: silentLogger });
  });
  afterAll(() => as?.close());

  const registerFor = (port: number): Promise<string> =>
    registerPublicClient(`${as.issuer}/reg`, {
      client_name: 'conformance',
      application_type: 'native',
      redirect_uris: [`http://127.0.0.1:${port}/callback`],
      grant_types: ['authorization_code'],
    });

  // [how the test names the case, the --resource argument]
  it.each([
    ['with --resource (RFC 8707)', resource],
    ['without --resource (single default resource)', undefined],
  ])(
    'metadata endpoint + authorization code grant %s',
    async (_case, withResource) => {
      const port = await freePort();
      const result = await runAuthorizationConformance({
        node: node.path!,
        issuer: as.issuer,
        clientId: await registerFor(port),
        callbackPort: port,
        resource: withResource,
      });
      expectAllPassed(result);
    },
    60_000,
  );
});
