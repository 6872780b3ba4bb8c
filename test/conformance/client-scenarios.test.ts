// Official MCP conformance (client side): every `auth/*` client scenario of
// @modelcontextprotocol/conformance, run against test/conformance/client/client.mjs (our built
// @mcp-auth-kit/client wired to the SDK v2 client), on the 2025-11-25 wire and on the default wire.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { node22, unavailableNode22 } from '../helpers/node22.js';

const run = promisify(execFile);
const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const node = await node22();
const skip = unavailableNode22('the conformance CLI (client auth scenarios)', node);
const cli = join(root, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
const clientScript = join(here, 'client/client.mjs');
const outDir = mkdtempSync(join(tmpdir(), 'mcp-auth-kit-conformance-'));
afterAll(() => rmSync(outDir, { recursive: true, force: true }));

/** Scenarios that fail on purpose, each with its reason. Everything else must pass. */
const EXPECTED_FAILURES: Record<string, string> = {
  'auth/2025-03-26-oauth-endpoint-fallback':
    'protocol 2025-03-26 default endpoints (/authorize, /token at the MCP origin) with no authorization server metadata at all: the client MUST verify PKCE support from code_challenge_methods_supported and refuses to proceed without metadata (Security Considerations, Authorization Code Protection)',
};

/**
 * The `auth/*` client scenarios listed by the pinned @modelcontextprotocol/conformance
 * (test/package.json: 0.2.0-alpha.12). Exact, so a scenario the tool adds, drops or renames on an
 * upgrade is noticed here instead of silently running fewer (or no) checks.
 */
const EXPECTED_AUTH_SCENARIO_COUNT = 33;
/** Scenarios this client must keep passing (RFC 9449 DPoP, extension SEP-1932). */
const REQUIRED_SCENARIOS = ['auth/dpop', 'auth/dpop-nonce'];

async function listAuthScenarios(): Promise<string[]> {
  const { stdout } = await run(node.path!, [cli, 'list'], { cwd: root });
  const clientPart = stdout.split('Client scenarios')[1]?.split('Authorization server scenarios')[0] ?? '';
  return [...clientPart.matchAll(/^\s*-\s+(auth\/\S+)/gm)].map((m) => m[1]!);
}

interface Outcome {
  passed: number;
  failed: number;
  overall: boolean;
  output: string;
}

async function runScenario(scenario: string, wire: string[]): Promise<Outcome> {
  const args = [
    cli,
    'client',
    '--command',
    `"${process.execPath}" "${clientScript}"`,
    '--scenario',
    scenario,
    '--timeout',
    '30000',
    '-o',
    outDir,
    ...wire,
  ];
  let output: string;
  try {
    const { stdout, stderr } = await run(node.path!, args, {
      cwd: outDir,
      maxBuffer: 32 * 1024 * 1024,
      env: { ...process.env, NO_COLOR: '1' },
    });
    output = stdout + stderr;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string };
    output = (e.stdout ?? '') + (e.stderr ?? '');
  }
  const m = /Passed: (\d+)\/(\d+), (\d+) failed/.exec(output);
  return {
    passed: m ? Number(m[1]) : 0,
    failed: m ? Number(m[3]) : -1,
    overall: /OVERALL: PASSED/.test(output),
    output,
  };
}

const scenarios = !skip && existsSync(cli) ? await listAuthScenarios() : [];
const WIRES: Array<[string, string[]]> = [
  ['2025-11-25 wire', ['--spec-version', '2025-11-25', '--force']],
  ['default wire', []],
];

describe.skipIf(skip)('MCP conformance: client auth scenarios', () => {
  it('the conformance CLI lists the auth scenarios and the client is built', () => {
    expect(existsSync(join(root, 'packages/client/dist/index.js'))).toBe(true);
    expect(new Set(scenarios).size, 'duplicate scenario names in the list output').toBe(scenarios.length);
    expect(scenarios, `auth scenarios listed: ${scenarios.join(', ')}`).toHaveLength(EXPECTED_AUTH_SCENARIO_COUNT);
    for (const name of Object.keys(EXPECTED_FAILURES)) expect(scenarios).toContain(name);
  });

  it('RFC 9449 (DPoP, extension SEP-1932): the auth/dpop and auth/dpop-nonce client scenarios are listed and run', () => {
    for (const name of REQUIRED_SCENARIOS) {
      expect(scenarios).toContain(name);
      // they must be run as ordinary (passing) scenarios, not excused
      expect(EXPECTED_FAILURES[name]).toBeUndefined();
    }
  });

  for (const [wireName, wire] of WIRES) {
    describe.concurrent(wireName, () => {
      for (const scenario of scenarios) {
        const reason = EXPECTED_FAILURES[scenario];
        const title = reason ? `${scenario} (expected failure: ${reason})` : scenario;
        it(title, { timeout: 120_000 }, async () => {
          const outcome = await runScenario(scenario, wire);
          if (reason) {
            // Keeps the list honest: an expected failure that starts passing must be removed.
            expect(outcome.overall, `${scenario} now passes: remove it from EXPECTED_FAILURES`).toBe(false);
          } else {
            expect(outcome.overall, outcome.output.slice(-4000)).toBe(true);
            expect(outcome.failed).toBe(0);
            expect(outcome.passed).toBeGreaterThan(0);
          }
        });
      }
    });
  }
});
