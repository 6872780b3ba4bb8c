import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { expect } from 'vitest';
import { createPkcePair, type AsEndpoints, type TokenResponse } from '@mcp-auth-kit/testing';
import { freePort } from '@mcp-auth-kit/test-utils';
import { registerPublicClient } from './registration.js';

/** The MCP SDK v1's own example server (`simpleStreamableHttp.js --oauth`, as shipped in node_modules) with its demo AS. */
export interface SdkExampleServer {
  mcpUrl: string;
  mcpPort: number;
  authPort: number;
  /** Tokens from the demo AS for `resource` (a client registered by DCR). */
  tokens(resource: string): Promise<TokenResponse>;
  close(): void;
}

const REDIRECT = 'http://127.0.0.1:9/callback';

export async function startSdkExampleServer(): Promise<SdkExampleServer> {
  // the installed SDK's root (its exports map sends package.json into dist/cjs)
  const sdk = createRequire(import.meta.url)
    .resolve('@modelcontextprotocol/sdk/package.json')
    .replace(/\/dist\/.*$/, '');
  const [mcpPort, authPort] = [await freePort(), await freePort()];
  const mcpUrl = `http://localhost:${mcpPort}/mcp`;
  const child: ChildProcess = spawn(process.execPath, [join(sdk, 'dist/esm/examples/server/simpleStreamableHttp.js'), '--oauth'], {
    env: { ...process.env, MCP_PORT: String(mcpPort), MCP_AUTH_PORT: String(authPort) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let seen = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the SDK example did not start: ${seen}`)), 20_000);
    const onData = (chunk: Buffer) => {
      seen += chunk.toString();
      if (/MCP Streamable HTTP Server listening/.test(seen) && /Authorization Server listening/.test(seen)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`the SDK example exited (${code}): ${seen}`)));
  });
  let client: { clientId: string; endpoints: AsEndpoints } | undefined;
  return {
    mcpUrl,
    mcpPort,
    authPort,
    async tokens(resource) {
      client ??= await registerClient(mcpUrl);
      return demoTokens(resource, client.clientId, client.endpoints);
    },
    close: () => void child.kill(),
  };
}

async function registerClient(mcpUrl: string): Promise<{ clientId: string; endpoints: AsEndpoints }> {
  const prm = (await (await fetch(new URL('/.well-known/oauth-protected-resource/mcp', mcpUrl))).json()) as {
    authorization_servers: string[];
  };
  const endpoints = (await (
    await fetch(new URL('/.well-known/oauth-authorization-server', prm.authorization_servers[0]))
  ).json()) as AsEndpoints;
  const clientId = await registerPublicClient(endpoints.registration_endpoint!, { redirect_uris: [REDIRECT], client_name: 'doctor e2e' });
  return { clientId, endpoints };
}

/** The demo AS approves at once (302 with the code, no `iss`): the flow by hand, PKCE S256 and `resource`. */
async function demoTokens(resource: string, clientId: string, endpoints: AsEndpoints): Promise<TokenResponse> {
  const { verifier, challenge } = createPkcePair();
  const authorize = new URL(endpoints.authorization_endpoint);
  const params = {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    state: 's1',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    resource,
    scope: 'mcp:tools',
  };
  for (const [k, v] of Object.entries(params)) authorize.searchParams.set(k, v);
  const res = await fetch(authorize, { redirect: 'manual' });
  const code = new URL(res.headers.get('location')!).searchParams.get('code')!;
  const token = await fetch(endpoints.token_endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: REDIRECT,
      client_id: clientId,
      resource,
    }),
  });
  expect(token.status).toBe(200);
  return (await token.json()) as TokenResponse;
}
