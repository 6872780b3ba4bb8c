import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readdirSync } from 'node:fs';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { run, type CliIo } from '../src/program.js';
import { headlessBrowser } from '../../client/test/helpers/harness.js';
import { DOCTOR_EXIT } from '../src/doctor/command.js';
import {
  HOSTILE,
  startHandmadeDeployment,
  type Breakage,
  type HandmadeDeployment,
} from '../../testing/test/helpers/handmade-deployment.js';
import { recordingIo } from './helpers/io.js';
import { notesStack } from './helpers/notes-stack.js';

async function cli(args: string[], options: { env?: NodeJS.ProcessEnv; colour?: boolean; open?: CliIo['open'] } = {}) {
  const { io, out, err } = recordingIo(options.env ?? {}, {
    ...(options.colour !== undefined && { colour: options.colour }),
    ...(options.open && { open: options.open }),
  });
  const code = await run(args, io);
  return { code, out: out(), err: err() };
}

const deployments: HandmadeDeployment[] = [];
const deploy = async (breaks: Breakage[] = []) => {
  const d = await startHandmadeDeployment(breaks);
  deployments.push(d);
  return d;
};
afterAll(async () => Promise.all(deployments.map((d) => d.close())));

describe('mcp-auth-kit doctor (issue 45)', () => {
  let good: HandmadeDeployment;
  beforeAll(async () => {
    good = await deploy();
  });

  it('--json: the report parses; exit 0 when all pass; the token never printed', async () => {
    const { code, out } = await cli([
      'doctor',
      good.url,
      '--allow-private',
      '--json',
      '--token',
      good.token,
      '--other-resource-token',
      good.otherResourceToken,
      '--scope-probe-tool',
      'write',
    ]);
    expect(code).toBe(DOCTOR_EXIT.ok);
    const report = JSON.parse(out) as { status: string; findings: Array<{ id: string; status: string }> };
    expect(report.status).toBe('pass');
    expect(report.findings.find((f) => f.id === 'token-other-resource')?.status).toBe('pass');
    expect(out).not.toContain(good.token);
  });

  it.each<[Breakage, string]>([
    ['no-pkce', 'as-pkce'],
    ['prm-resource', 'prm-resource'],
  ])('exit 1 when a check fails (%s): the human report names %s, its section and its fix', async (breakage, id) => {
    const broken = await deploy([breakage]);
    const { code, out } = await cli(['doctor', broken.url, '--allow-private']);
    expect(code).toBe(DOCTOR_EXIT.failed);
    expect(out).toMatch(/FAIL /);
    expect(out).toMatch(/fix: /);
    const json = JSON.parse((await cli(['doctor', broken.url, '--allow-private', '--json'])).out) as {
      findings: Array<{ id: string; status: string }>;
    };
    expect(json.findings.find((f) => f.id === id)?.status).toBe('fail');
  });

  it('warnings only: exit 0', async () => {
    const warned = await deploy(['no-resource-metadata']);
    const { code, out } = await cli(['doctor', warned.url, '--allow-private']);
    expect(code).toBe(DOCTOR_EXIT.ok);
    expect(out).toMatch(/^WARN: /m);
  });

  it.each([
    [['doctor', 'not a url']],
    [['doctor', 'http://127.0.0.1:1/mcp', '--max-requests', '0']],
    [['doctor', 'http://127.0.0.1:1/mcp', '--no-such-option']],
    [['doctor', 'http://127.0.0.1:1/mcp', '--color', 'sometimes']],
    [['doctor', 'http://127.0.0.1:1/mcp', '--refresh-token', 'r']],
    [['doctor']],
  ])('usage errors exit 2 with a message: %j', async (args) => {
    const { code, err } = await cli(args);
    expect(code).toBe(DOCTOR_EXIT.usage);
    expect(err).toMatch(/error/);
  });

  it('--help lists every option', async () => {
    const { code, out } = await cli(['doctor', '--help']);
    expect(code).toBe(0);
    for (const option of [
      '--json',
      '--token',
      '--login',
      '--allow-private',
      '--other-resource-token',
      '--refresh-token',
      '--scope-probe-tool',
      '--browser-origin',
      '--max-requests',
      '--color',
    ]) {
      expect(out).toContain(option);
    }
    expect(out).toMatch(/Exit code: 0 .* 1 .* 2 usage/);
  });

  it('without --allow-private a loopback server is not contacted (SSRF rules) and the report says why', async () => {
    const { code, out } = await cli(['doctor', good.url]);
    expect(code).toBe(DOCTOR_EXIT.failed);
    expect(out).toMatch(/egress policy/);
  });

  it("terminal safety: a hostile server's strings are escaped, with colour on or off; only the report's own colours are sequences", async () => {
    const hostile = await deploy(['hostile-strings', 'prm-resource', 'issuer-mismatch']);
    for (const colour of [false, true]) {
      const { out } = await cli(['doctor', hostile.url, '--allow-private', '--verbose'], { colour });
      expect(out).toContain('\\u001b[2J');
      expect(out).toContain('\\u202e');
      // no control but newline and the report's own SGR colours; no forged line
      const withoutStyles = out.replace(/\u001b\[(?:1|2|22|31|32|33|36|39)m/g, '');
      expect(withoutStyles).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/);
      expect(out).not.toMatch(/^PASS forged line/m);
      expect(out.includes('\u001b[')).toBe(colour);
    }
    expect(HOSTILE).toContain('\u001b');
  });

  it('NO_COLOR wins over a terminal; FORCE_COLOR colours without one', async () => {
    expect((await cli(['doctor', good.url, '--allow-private'], { colour: true, env: { NO_COLOR: '1' } })).out).not.toContain('\u001b[');
    expect((await cli(['doctor', good.url, '--allow-private'], { env: { FORCE_COLOR: '1' } })).out).toContain('\u001b[32m');
  });
});

describe('mcp-auth-kit doctor --login (the CLI login, against oidc-provider)', () => {
  const stack = notesStack('mak-doctor-', () => new McpServer({ name: 'notes', version: '1.0.0' }));

  it("logs in into a throwaway store, runs the token and refresh checks, and leaves the user's store untouched", async () => {
    const { code, out, err } = await cli(
      ['doctor', stack.rs.mcpUrl, '--allow-private', '--login', '--json', '--scope-probe-tool', 'write'],
      {
        env: { MCP_AUTH_KIT_HOME: stack.home, CI: '' },
        open: async (u) => {
          await headlessBrowser(u);
          return true;
        },
      },
    );
    const report = JSON.parse(out) as { findings: Array<{ id: string; status: string }> };
    const status = (id: string) => report.findings.find((f) => f.id === id)?.status;
    expect(status('token-accepted')).toBe('pass');
    expect(status('insufficient-scope')).toBe('pass');
    expect(status('refresh-rotation')).toBe('pass');
    expect(err).toMatch(/Logged in via .* for the checks \(a throwaway store, deleted afterwards\)/);
    // the tiny RS does not check Origin: a real failure, reported
    expect(code).toBe(DOCTOR_EXIT.failed);
    expect(readdirSync(stack.home)).toEqual([]);
  });

  it('--login with the global --client-credentials: the CLI machine login (RFC 6749 §4.4) gives the token', async () => {
    const registration = await fetch(new URL('/reg', stack.as.issuer), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
        token_endpoint_auth_method: 'client_secret_basic',
      }),
    });
    const client = (await registration.json()) as { client_id: string; client_secret: string };
    const args = ['--client-credentials', '--client-id', client.client_id, '--issuer', stack.as.issuer];
    const { out } = await cli([...args, 'doctor', stack.rs.mcpUrl, '--allow-private', '--login', '--json'], {
      env: { MCP_AUTH_KIT_HOME: stack.home, MCP_AUTH_KIT_CLIENT_SECRET: client.client_secret },
    });
    const report = JSON.parse(out) as { findings: Array<{ id: string; status: string }> };
    expect(report.findings.find((f) => f.id === 'token-accepted')?.status).toBe('pass');
    expect(out).not.toContain(client.client_secret);
    expect(readdirSync(stack.home)).toEqual([]);
  });
});
