import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run, type CliIo } from '../src/program.js';
import { startHostileMcpServer } from '../../client/test/helpers/hostile-mcp-server.js';
import { closeAfterEach } from '../../client/test/helpers/scratch.js';

/**
 * Review r46 F1, the CLI's side: its one-shot commands end within `--request-timeout` (its help:
 * "every network request ends within --request-timeout seconds") and refuse an MCP message over
 * 8 MiB (a JSON answer or one SSE event), whatever the MCP server sends. The library's bounds are
 * tested in packages/client/test/mcp-body-bounds.test.ts.
 */
const hostile = closeAfterEach(startHostileMcpServer);

describe('CLI one-shot commands end within --request-timeout (review r46 F1)', () => {
  let home: string;
  beforeAll(() => {
    home = mkdtempSync(join(tmpdir(), 'mak-bounds-'));
  });
  afterAll(() => rmSync(home, { recursive: true, force: true }));

  async function cli(args: string[]) {
    const err: string[] = [];
    const io: CliIo = { stdout: () => undefined, stderr: (t) => void err.push(t), env: { MCP_AUTH_KIT_HOME: home } };
    const started = Date.now();
    const code = await run(['--no-browser', ...args], io);
    return { code, err: err.join(''), ms: Date.now() - started };
  }

  it('tools: an endless JSON answer ends with the size refusal, not a 60 s SDK timeout', async () => {
    const s = await hostile('json-endless');
    const r = await cli(['--request-timeout', '2', 'tools', s.url]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/sent a response larger than 8388608 bytes; refused/);
    expect(r.ms).toBeLessThan(5000);
  });

  it('tools: one endless SSE event ends with the size refusal at once (not the request timeout)', async () => {
    const s = await hostile('sse-endless-event');
    const r = await cli(['--request-timeout', '10', 'tools', s.url]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/sent a stream event larger than 8388608 bytes; refused/);
    expect(r.ms).toBeLessThan(8000);
  });

  it('tools: an SSE answer trickled for ever ends at --request-timeout, saying which server', async () => {
    const s = await hostile('sse-trickle');
    const r = await cli(['--request-timeout', '1', 'tools', s.url]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/the MCP server at http:\/\/127\.0\.0\.1:\d+ did not answer in time \(no complete answer within 1 s\)/);
    expect(r.ms).toBeLessThan(4000);
  });

  it('call: a JSON answer trickled for ever ends at --request-timeout', async () => {
    const s = await hostile('json-trickle');
    const r = await cli(['--request-timeout', '1', 'call', s.url, 'echo']);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/the MCP server at http:\/\/127\.0\.0\.1:\d+ did not answer in time \(no complete answer within 1 s\)/);
    expect(r.ms).toBeLessThan(4000);
  });
});
