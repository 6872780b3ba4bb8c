import { generateKeyPairSync, createPublicKey } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli-process.js';
import { inspectAccessToken } from '../helpers/jwt.js';
import { startDemoStack, type DemoStack } from '../helpers/stack.js';
import { JWT_BEARER, machineClient, secretClient } from '../helpers/clients.js';

/**
 * The CLI's machine logins against our AS and the demo (issue 42, client credentials extension):
 * a configured client with a secret from the environment (RFC 6749 §4.4), and one with registered
 * keys whose `--private-key` signs the RFC 7523 §2.1 assertion grant; then `call whoami` on the demo
 * with the same options, and `status --check` in the demo's revision. The assertion grant's own
 * attack tests are the AS's (test/security/client-assertion.attack.test.ts).
 */
const SECRET = 'cli-machine-secret-0123456789abcdef';

let stack: DemoStack;
let dir: string;
let keyFile: string;
let otherKeyFile: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cli-machine-'));
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const other = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  keyFile = join(dir, 'signer.pem');
  otherKeyFile = join(dir, 'other.pem');
  writeFileSync(keyFile, privateKey.export({ format: 'pem', type: 'sec1' }));
  writeFileSync(otherKeyFile, other.privateKey.export({ format: 'pem', type: 'pkcs8' }));
  chmodSync(keyFile, 0o600);
  chmodSync(otherKeyFile, 0o600);
  const jwk = { ...createPublicKey(privateKey).export({ format: 'jwk' }), alg: 'ES256', use: 'sig', kid: 'cli-signer' };
  stack = await startDemoStack({
    asConfig: () => ({
      clients: [
        secretClient('cli-secret', SECRET, ['client_credentials'], { scope: 'notes:read' }),
        machineClient('cli-signer', { grant_types: [JWT_BEARER], token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [jwk] } }),
      ],
    }),
  });
}, 60_000);
afterAll(async () => {
  await stack?.close();
  rmSync(dir, { recursive: true, force: true });
});

function env(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const e: NodeJS.ProcessEnv = { ...process.env, MCP_AUTH_KIT_HOME: mkdtempSync(join(dir, 'home-')) };
  delete e.MCP_AUTH_KIT_CLIENT_SECRET; // only what the test gives
  return { ...e, ...extra };
}

describe('mcp-auth-kit machine logins against our AS and the demo MCP server', () => {
  it('--client-credentials with the secret from the environment: login, call whoami, status --check valid', async () => {
    const e = env({ MCP_AUTH_KIT_CLIENT_SECRET: SECRET });
    const flags = ['--client-credentials', '--client-id', 'cli-secret', '--issuer', stack.issuer];
    const login = await runCli(['login', ...flags, stack.mcpUrl], e);
    expect(login.code, login.stderr).toBe(0);
    expect(login.stdout).toContain(`Logged in to ${stack.mcpUrl} via ${stack.issuer} (scope: notes:read)`);
    const call = await runCli(['call', ...flags, stack.mcpUrl, 'whoami'], e);
    expect(call.code, call.stderr).toBe(0);
    expect(call.stdout).toContain('cli-secret');
    const check = await runCli(['status', '--check', ...flags], e);
    expect(check.stdout).toMatch(/check: +valid: the MCP server accepted the access token \(HTTP 200\) over MCP 2026-07-28/);
  });

  it('--private-key signs the RFC 7523 §2.1 assertion: our AS issues a token for the client, the demo answers', async () => {
    const e = env();
    const flags = ['--client-credentials', '--client-id', 'cli-signer', '--issuer', stack.issuer, '--private-key', keyFile];
    const login = await runCli(['login', ...flags, stack.mcpUrl], e);
    expect(login.code, login.stderr).toBe(0);
    const call = await runCli(['call', ...flags, stack.mcpUrl, 'whoami'], e);
    expect(call.code, call.stderr).toBe(0);
    expect(call.stdout).toContain('cli-signer');
    const stored = JSON.parse(readFileSync(join(e.MCP_AUTH_KIT_HOME!, 'store.json'), 'utf8')) as {
      tokens: Record<string, { access_token: string }>;
    };
    const token = Object.values(stored.tokens)[0]!.access_token;
    expect(inspectAccessToken(token).claims).toMatchObject({
      iss: stack.issuer,
      aud: stack.mcpUrl,
      sub: 'cli-signer',
      client_id: 'cli-signer',
    });
  });

  it('an assertion signed with another key is refused by the AS: the CLI says invalid_grant and exits 1', async () => {
    const e = env();
    const run = await runCli(
      ['login', '--client-credentials', '--client-id', 'cli-signer', '--issuer', stack.issuer, '--private-key', otherKeyFile, stack.mcpUrl],
      e,
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^error: .*(invalid_grant|invalid_client).*\[MCP_AUTH_TOKEN_REQUEST_FAILED\]/m);
  });
});
