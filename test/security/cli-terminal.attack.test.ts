import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliPath } from '../helpers/cli.js';

/**
 * Terminal escape injection through the `mcp-auth-kit` CLI (MCP security best practices: treat
 * server-provided text as untrusted; ECMA-48 C0/C1 control functions). A hostile MCP server and a
 * hostile AS on loopback put ESC (CSI, OSC 0 title, OSC 8 link, OSC 52 clipboard), BEL, CR,
 * backspace, DEL and 8-bit C1 controls (CSI U+009B, OSC U+009D, ST U+009C) into every string the
 * CLI prints: tool names, descriptions and results, the server name, the PRM `resource`, the AS
 * `issuer`, `error` and `error_description`. Nothing of it may reach the terminal as a control
 * character; the visible text (and, in JSON output, the exact value) must survive.
 */

const ESC = '\u001b';
const BEL = '\u0007';
const PAYLOADS = {
  clear: `${ESC}[2J${ESC}[H`,
  title: `${ESC}]0;pwned-title${BEL}`,
  clipboard: `${ESC}]52;c;ZWNobyBwd25lZA==${BEL}`,
  link: `${ESC}]8;;https://evil.example/${ESC}\\click${ESC}]8;;${ESC}\\`,
  c1: '\u009b31m\u009d0;c1-title\u009c',
  misc: `\r\b\u007f\u0000${BEL}`,
};
const ALL = Object.values(PAYLOADS).join('');

/** Terminal controls the CLI must never emit: C0 but newline and tab, DEL, C1. */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

interface Hostile {
  url: string;
  server: Server;
}

async function serve(
  handler: (path: string, body: string, self: string) => { status: number; headers?: Record<string, string>; body?: unknown },
): Promise<Hostile> {
  let self = '';
  const server = createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    const out = handler(new URL(req.url ?? '/', self).pathname, body, self);
    res
      .writeHead(out.status, { 'content-type': 'application/json', ...out.headers })
      .end(out.body === undefined ? '' : JSON.stringify(out.body));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  self = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url: self, server };
}

const TOOLS = [
  {
    name: `evil-tool${PAYLOADS.clear}${PAYLOADS.c1}`,
    description: `reads notes${PAYLOADS.clipboard}${PAYLOADS.title} and more`,
    inputSchema: { type: 'object' },
  },
  { name: `bell${PAYLOADS.misc}`, description: `line one\nline two ${PAYLOADS.link}`, inputSchema: { type: 'object' } },
];
const RESULT_TEXT = `result-text${ALL}end`;

/** A stateless MCP endpoint (JSON responses) that needs no authorization. */
function jsonRpc(body: string) {
  const msg = JSON.parse(body) as { id?: number; method: string; params?: { protocolVersion?: string } };
  if (msg.id === undefined) return { status: 202 };
  const result =
    msg.method === 'initialize'
      ? {
          protocolVersion: msg.params?.protocolVersion,
          capabilities: { tools: {} },
          serverInfo: { name: `hostile${ALL}`, version: '1.0.0' },
        }
      : msg.method === 'tools/list'
        ? { tools: TOOLS }
        : msg.method === 'tools/call'
          ? { content: [{ type: 'text', text: RESULT_TEXT }] }
          : {};
  return { status: 200, body: { jsonrpc: '2.0', id: msg.id, result } };
}

describe('attack: terminal escape sequences from servers through the CLI', () => {
  let mcp: Hostile;
  let as: Hostile;
  let home: string;

  beforeAll(async () => {
    as = await serve((path, _body, self) => {
      if (path === '/.well-known/oauth-authorization-server/bad-issuer') {
        return { status: 200, body: { issuer: `${self}/bad-issuer${ALL}`, code_challenge_methods_supported: ['S256'] } };
      }
      if (path.startsWith('/.well-known/')) {
        return {
          status: 200,
          body: {
            issuer: self,
            authorization_endpoint: `${self}/authorize`,
            token_endpoint: `${self}/token`,
            registration_endpoint: `${self}/register`,
            code_challenge_methods_supported: ['S256'],
            grant_types_supported: ['authorization_code', 'client_credentials'],
          },
        };
      }
      if (path === '/register')
        return { status: 400, body: { error: 'invalid_client_metadata', error_description: `registration-refused${ALL}` } };
      if (path === '/token') return { status: 400, body: { error: 'invalid_client', error_description: `token-refused${ALL}` } };
      return { status: 404, body: {} };
    });
    mcp = await serve((path, body, self) => {
      if (path === '/open/mcp') return body ? jsonRpc(body) : { status: 405 };
      const prm = /^\/\.well-known\/oauth-protected-resource(\/.*)$/.exec(path)?.[1];
      if (prm === '/mismatch/mcp') return { status: 200, body: { resource: `${self}/other${ALL}`, authorization_servers: [as.url] } };
      // the URL parser drops trailing C0 controls, so this `resource` still matches the server URL
      if (prm === '/trailing/mcp')
        return { status: 200, body: { resource: `${self}/trailing/mcp${BEL}${ESC}\b\r\u0000${ESC}`, authorization_servers: [as.url] } };
      if (prm === '/as/mcp') return { status: 200, body: { resource: `${self}/as/mcp`, authorization_servers: [as.url] } };
      if (prm === '/badiss/mcp')
        return { status: 200, body: { resource: `${self}/badiss/mcp`, authorization_servers: [`${as.url}/bad-issuer`] } };
      return {
        status: 401,
        headers: { 'www-authenticate': `Bearer resource_metadata="${self}/.well-known/oauth-protected-resource${path}"` },
        body: { error: 'unauthorized' },
      };
    });
    home = await mkdtemp(join(tmpdir(), 'mak-terminal-'));
  });
  afterAll(async () => {
    for (const h of [mcp, as]) {
      h?.server.closeAllConnections();
      h?.server.close();
    }
    if (home) await rm(home, { recursive: true, force: true });
  });

  const cli = (args: string[]) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        [cliPath, '--no-browser', '--timeout', '5', ...args],
        {
          env: { ...process.env, MCP_AUTH_KIT_HOME: home, MCP_AUTH_KIT_CLIENT_SECRET: 'some-secret', CI: 'true' },
          encoding: 'utf8',
          timeout: 30_000,
        },
        (err, stdout, stderr) => resolve({ code: err ? Number((err as { code?: unknown }).code ?? 1) : 0, stdout, stderr }),
      );
    });

  const clean = (text: string, what: string) => expect(CONTROL.exec(text)?.[0], `${what} carries a control character`).toBeUndefined();

  it('tools: names and descriptions are printed without controls (visible text and newlines kept)', async () => {
    const r = await cli(['tools', `${mcp.url}/open/mcp`]);
    expect(r.code, r.stderr).toBe(0);
    clean(r.stdout, 'stdout');
    clean(r.stderr, 'stderr');
    expect(r.stdout).toContain('evil-tool[2J[H31m0;c1-title — reads notes]52;c;ZWNobyBwd25lZA==]0;pwned-title and more');
    expect(r.stdout).toContain('line one\nline two');
  });

  it('tools --json: no raw controls, and the JSON still parses back to the exact server values', async () => {
    const r = await cli(['tools', '--json', `${mcp.url}/open/mcp`]);
    expect(r.code, r.stderr).toBe(0);
    clean(r.stdout, 'stdout');
    const tools = JSON.parse(r.stdout) as { name: string; description: string }[];
    expect(tools.map((t) => [t.name, t.description])).toEqual(TOOLS.map((t) => [t.name, t.description]));
  });

  it('call: the tool result is printed without controls and parses back to the exact text', async () => {
    const r = await cli(['call', `${mcp.url}/open/mcp`, 'evil-tool']);
    expect(r.code, r.stderr).toBe(0);
    clean(r.stdout, 'stdout');
    clean(r.stderr, 'stderr');
    expect((JSON.parse(r.stdout) as { content: { text: string }[] }).content[0]!.text).toBe(RESULT_TEXT);
  });

  it('login: a PRM `resource` with controls (mismatching, and matching after the URL parser drops trailing controls) is shown clean', async () => {
    const mismatch = await cli(['login', `${mcp.url}/mismatch/mcp`]);
    expect(mismatch.code).toBe(1);
    expect(mismatch.stderr).toContain(`(${mcp.url}/other[2J[H`);
    expect(mismatch.stderr).toContain('MCP_AUTH_PRM_RESOURCE_MISMATCH');
    clean(mismatch.stderr, 'stderr');
    const trailing = await cli(['login', `${mcp.url}/trailing/mcp`]);
    expect(trailing.code).toBe(1);
    expect(trailing.stderr).toContain(`Discovered ${mcp.url}/trailing/mcp (authorization server`);
    clean(trailing.stderr, 'stderr');
  });

  it('login: the AS `error_description` of a refused registration and a mismatching AS `issuer` are shown clean', async () => {
    const refused = await cli(['login', `${mcp.url}/as/mcp`]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('registration-refused');
    clean(refused.stderr, 'stderr');
    const badIssuer = await cli(['login', `${mcp.url}/badiss/mcp`]);
    expect(badIssuer.code).toBe(1);
    expect(badIssuer.stderr).toContain('MCP_AUTH_AS_ISSUER_MISMATCH');
    clean(badIssuer.stderr, 'stderr');
  });

  it('login --client-credentials: the token endpoint `error_description` is shown clean', async () => {
    const r = await cli(['--client-credentials', '--client-id', 'svc', '--issuer', as.url, 'login', `${mcp.url}/as/mcp`]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('token-refused');
    clean(r.stdout, 'stdout');
    clean(r.stderr, 'stderr');
  });
});
