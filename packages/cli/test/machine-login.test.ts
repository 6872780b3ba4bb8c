// The CLI's machine and enterprise logins (issue 42): `login --client-credentials` with a secret
// from the environment or a file (never argv) or a private key signing RFC 7523 §2.1 assertions
// (spec/extensions/auth-oauth-client-credentials.mdx), and `login --enterprise`: SSO at the
// enterprise IdP, then ID Token → ID-JAG → access token (spec/extensions/auth-enterprise-managed-
// authorization.mdx §For MCP clients), with the interactive login's messages and error codes.
import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeJwt, jwtVerify } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { OAUTH_CLIENT_CREDENTIALS_EXTENSION, CLIENT_CAPABILITIES_META_KEY } from '@mcp-auth-kit/protocol';
import { run } from '../src/program.js';
import { recordingIo } from './helpers/io.js';
import { startFakeAs, startFakeRs, type FakeAs, type FakeRs } from '../../client/test/helpers/fake-servers.js';
import { IDP_CLIENT_ID, IDP_CLIENT_SECRET, startFakeIdp, type FakeIdp } from '../../client/test/helpers/fake-idp.js';
import { startRecordingMcpServer } from '../../client/test/helpers/recording-mcp-server.js';
import { scratch } from '../../client/test/helpers/scratch.js';

const running: { close(): Promise<void> }[] = [];
afterEach(async () => {
  while (running.length) await running.pop()!.close();
});
const tmp = scratch('mak-machine-').tmp;

async function servers(): Promise<[FakeAs, FakeRs]> {
  const as = await startFakeAs();
  const rs = await startFakeRs(as, { scope: 'basic' });
  running.push(as, rs);
  return [as, rs];
}

function cli(env: NodeJS.ProcessEnv = {}) {
  const dir = tmp();
  const open = async (url: URL) => {
    await fetch(url);
    return true;
  };
  return { dir, ...recordingIo({ MCP_AUTH_KIT_HOME: dir, ...env }, { open }) };
}

/** A file with the given mode in a scratch directory. */
function file(dir: string, name: string, text: string, mode = 0o600): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  chmodSync(path, mode);
  return path;
}

const machine = (as: FakeAs, ...more: string[]) => ['login', '--client-credentials', '--client-id', 'svc', '--issuer', as.issuer, ...more];

/** The CLI's stderr for the login `args(as, home)` to a fresh pair, which it must refuse before any token request. */
async function refusedLogin(args: (as: FakeAs, home: string) => string[]): Promise<string> {
  const [as, rs] = await servers();
  const c = cli();
  expect(await run([...args(as, c.dir), rs.mcpUrl], c.io)).toBe(1);
  expect(as.tokenRequests).toHaveLength(0);
  return c.err();
}

describe('login --client-credentials with a secret (client credentials extension, RFC 6749 §4.4)', () => {
  it('takes the secret from $MCP_AUTH_KIT_CLIENT_SECRET: no browser, client_credentials with Basic auth, "Logged in"', async () => {
    const [as, rs] = await servers();
    const c = cli({ MCP_AUTH_KIT_CLIENT_SECRET: 'env-s3cret' });
    expect(await run([...machine(as), rs.mcpUrl], c.io), c.err()).toBe(0);
    expect(c.out()).toContain(`Logged in to ${rs.mcpUrl} via ${as.issuer} (scope: basic)`);
    expect(c.opened).toHaveLength(0);
    const t = as.tokenRequests[0]!;
    expect(t.body.get('grant_type')).toBe('client_credentials');
    expect(t.authorization).toBe(`Basic ${Buffer.from('svc:env-s3cret').toString('base64')}`);
    expect(c.out() + c.err()).not.toContain('env-s3cret');
  });

  it('takes the secret from --client-secret-file (owner-only), over the environment', async () => {
    const [as, rs] = await servers();
    const c = cli({ MCP_AUTH_KIT_CLIENT_SECRET: 'not-this-one' });
    const secret = file(c.dir, 'secret', 'file-s3cret\n');
    expect(await run([...machine(as, '--client-secret-file', secret), rs.mcpUrl], c.io), c.err()).toBe(0);
    expect(as.tokenRequests[0]!.authorization).toBe(`Basic ${Buffer.from('svc:file-s3cret').toString('base64')}`);
  });

  it('refuses a secret file other users can read, before any request', async () => {
    let secret = '';
    const err = await refusedLogin((as, home) => {
      secret = file(home, 'secret', 'file-s3cret', 0o644);
      return machine(as, '--client-secret-file', secret);
    });
    expect(err).toContain(`can be read by other users; make it private first (chmod 600 ${secret})`);
    expect(err).toContain('[MCP_AUTH_INVALID_ARGUMENT]');
    expect(err).not.toContain('file-s3cret');
  });

  it('refuses a secret on the command line (visible to other users in ps), without echoing it', async () => {
    const err = await refusedLogin((as) => machine(as, '--client-secret', 'argv-s3cret'));
    expect(err).toContain('never from the command line');
    expect(err).not.toContain('argv-s3cret');
  });

  it('refuses a missing secret or an unknown secret file, before any request', async () => {
    expect(await refusedLogin((as) => machine(as))).toContain(
      '--client-credentials needs a client secret ($MCP_AUTH_KIT_CLIENT_SECRET or --client-secret-file) or --private-key',
    );
    expect(await refusedLogin((as, home) => machine(as, '--client-secret-file', join(home, 'nope')))).toContain('cannot read');
  });

  it("a refused grant reads as the interactive login's refusals do: the AS error code and the library code", async () => {
    const as = await startFakeAs();
    const rs = await startFakeRs(as);
    running.push(as, rs);
    const c = cli({ MCP_AUTH_KIT_CLIENT_SECRET: 's' });
    // credentials issued by another AS than the one the MCP server names
    expect(await run(['login', '--client-credentials', '--client-id', 'svc', '--issuer', 'https://other.example', rs.mcpUrl], c.io)).toBe(
      1,
    );
    expect(c.err()).toMatch(/^error: .*\[MCP_AUTH_AS_MISMATCH\]/m);
    expect(as.tokenRequests).toHaveLength(0);
  });
});

describe('login --client-credentials --private-key (RFC 7523 §2.1 assertion grant)', () => {
  for (const [name, make] of [
    ['an EC P-256 key in SEC1 PEM', () => generateKeyPairSync('ec', { namedCurve: 'P-256' })],
    ['an RSA key in PKCS#1 PEM', () => generateKeyPairSync('rsa', { modulusLength: 2048 })],
  ] as const) {
    it(`signs the assertion with ${name}: iss = sub = client id, aud = the AS issuer, short exp, jti`, async () => {
      const [as, rs] = await servers();
      const c = cli();
      const { privateKey } = make();
      const type = name.includes('SEC1') ? 'sec1' : 'pkcs1';
      const key = file(c.dir, 'svc.pem', privateKey.export({ format: 'pem', type }).toString());
      expect(await run([...machine(as, '--private-key', key), rs.mcpUrl], c.io), c.err()).toBe(0);
      const body = as.tokenRequests[0]!.body;
      expect(body.get('grant_type')).toBe('urn:ietf:params:oauth:grant-type:jwt-bearer');
      expect(body.get('client_id')).toBe('svc');
      const { payload } = await jwtVerify(body.get('assertion')!, createPublicKey(privateKey), {
        issuer: 'svc',
        subject: 'svc',
        audience: as.issuer,
        typ: 'JWT',
      });
      expect(payload.exp! - payload.iat!).toBeLessThanOrEqual(60);
      expect(payload.jti).toBeTruthy();
      expect(c.out()).toContain(`Logged in to ${rs.mcpUrl} via ${as.issuer}`);
    });
  }

  it('refuses a file that holds no key, a key others can read, and a key together with a secret', async () => {
    const [as, rs] = await servers();
    const c = cli();
    expect(await run([...machine(as, '--private-key', file(c.dir, 'bad.pem', 'not a key')), rs.mcpUrl], c.io)).toBe(1);
    expect(c.err()).toContain('holds no private key');
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const pem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    const open = cli();
    expect(await run([...machine(as, '--private-key', file(open.dir, 'k.pem', pem, 0o640)), rs.mcpUrl], open.io)).toBe(1);
    expect(open.err()).toContain('can be read by other users');
    const both = cli({ MCP_AUTH_KIT_CLIENT_SECRET: 's' });
    expect(await run([...machine(as, '--private-key', file(both.dir, 'k.pem', pem)), rs.mcpUrl], both.io)).toBe(1);
    expect(both.err()).toContain('cannot be used together');
    expect(as.tokenRequests).toHaveLength(0);
  });
});

describe('login --enterprise (enterprise-managed authorization)', () => {
  async function idp(): Promise<FakeIdp> {
    const i = await startFakeIdp();
    running.push(i);
    return i;
  }
  const enterprise = (i: FakeIdp, as: FakeAs) => [
    'login',
    '--enterprise',
    '--idp-issuer',
    i.issuer,
    '--idp-client-id',
    IDP_CLIENT_ID,
    '--client-id',
    'mcp-cli',
    '--issuer',
    as.issuer,
  ];

  it('signs in at the IdP in the browser (as the interactive login says), then ID Token → ID-JAG → access token', async () => {
    const i = await idp();
    const [as, rs] = await servers();
    const c = cli({ MCP_AUTH_KIT_IDP_CLIENT_SECRET: IDP_CLIENT_SECRET });
    expect(await run([...enterprise(i, as), rs.mcpUrl], c.io), c.err()).toBe(0);
    expect(c.opened).toHaveLength(1);
    expect(c.opened[0]!.origin).toBe(i.issuer);
    expect(c.err()).toContain('Open this URL to authorize');
    expect(c.err()).toContain('Waiting for you to sign in and allow access in the browser');
    expect(c.out()).toContain(`Logged in to ${rs.mcpUrl} via ${as.issuer}`);
    const exchange = i.tokenRequests.find((r) => r.body.get('grant_type')?.endsWith('token-exchange'))!.body;
    expect(exchange.get('audience')).toBe(as.issuer);
    expect(exchange.get('resource')).toBe(rs.mcpUrl);
    expect(decodeJwt(as.tokenRequests[0]!.body.get('assertion')!)).toMatchObject({ iss: i.issuer, aud: as.issuer, client_id: 'mcp-cli' });
    // never sent to the MCP AS's authorization endpoint
    expect(as.authorizations).toHaveLength(0);
    expect(c.err() + c.out()).not.toContain(IDP_CLIENT_SECRET);
  });

  it('an IdP policy refusal is reported with its OAuth error and the library code', async () => {
    const i = await idp();
    i.refuseExchange = 'access_denied';
    const [as, rs] = await servers();
    const c = cli({ MCP_AUTH_KIT_IDP_CLIENT_SECRET: IDP_CLIENT_SECRET });
    expect(await run([...enterprise(i, as), rs.mcpUrl], c.io)).toBe(1);
    expect(c.err()).toMatch(
      /^error: the enterprise IdP refused the ID-JAG token exchange \(HTTP 400, access_denied: not allowed by policy\) \[MCP_AUTH_TOKEN_REQUEST_FAILED\]/m,
    );
    expect(as.tokenRequests).toHaveLength(0);
  });

  it('refuses missing IdP settings and --client-credentials together with --enterprise', async () => {
    const [as, rs] = await servers();
    const c = cli();
    expect(await run(['login', '--enterprise', '--client-id', 'x', '--issuer', as.issuer, rs.mcpUrl], c.io)).toBe(1);
    expect(c.err()).toContain('--enterprise needs --idp-issuer and --idp-client-id');
    const both = cli();
    expect(await run(['login', '--enterprise', '--client-credentials', rs.mcpUrl], both.io)).toBe(1);
    expect(both.err()).toContain('cannot be used together');
  });
});

describe('the CLI declares the extension it uses on the 2026-07-28 wire', () => {
  it('tools --client-credentials: each 2026-07-28 request carries io.modelcontextprotocol/oauth-client-credentials', async () => {
    const as = await startFakeAs();
    const mcp = await startRecordingMcpServer(as);
    running.push(as, mcp);
    const c = cli({ MCP_AUTH_KIT_CLIENT_SECRET: 's' });
    expect(await run(['tools', '--client-credentials', '--client-id', 'svc', '--issuer', as.issuer, mcp.mcpUrl], c.io), c.err()).toBe(0);
    expect(c.out()).toContain('ping — answers pong');
    const requests = (mcp.received.flat() as { id?: unknown; method?: string; params?: { _meta?: Record<string, unknown> } }[]).filter(
      (m) => m.id !== undefined && m.method !== undefined,
    );
    const onNewWire = requests.filter((m) => m.params?._meta?.['io.modelcontextprotocol/protocolVersion'] === '2026-07-28');
    expect(onNewWire.length).toBeGreaterThan(0);
    for (const m of onNewWire) {
      expect(m.params!._meta![CLIENT_CAPABILITIES_META_KEY]).toMatchObject({ extensions: { [OAUTH_CLIENT_CREDENTIALS_EXTENSION]: {} } });
    }
  });
});

describe('--help', () => {
  it('documents the machine and enterprise options, and that secrets never go on the command line', async () => {
    const c = cli();
    expect(await run(['--help'], c.io)).toBe(0);
    for (const text of [
      '--client-secret-file',
      '--private-key',
      '--enterprise',
      '--idp-issuer',
      '--idp-client-id',
      'MCP_AUTH_KIT_IDP_CLIENT_SECRET',
      'never on the command line',
    ]) {
      expect(c.out()).toContain(text);
    }
    const login = cli();
    expect(await run(['login', '--help'], login.io)).toBe(0);
    for (const text of ['login --client-credentials', '--private-key', 'login --enterprise', 'never on the command line']) {
      expect(login.out()).toContain(text);
    }
  });
});
