import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { run, type CliIo } from '../src/cli/program.js';
import { ERR, McpAuthClient } from '../src/index.js';
import { close, listen } from './helpers/harness.js';
import { refusal } from './helpers/scratch.js';

/**
 * Review r46 F1: the body of an MCP server's answer is bounded like an OAuth answer. A JSON
 * response is one JSON-RPC message (MCP Streamable HTTP transport, "Sending Messages to the
 * Server": `Content-Type: application/json` returns one object): at most `maxMessageBytes`, whole
 * within `requestTimeoutMs`. An SSE stream may stay open (Streamable HTTP §Listening for Messages),
 * so each event (WHATWG HTML §9.2.6: ended by an empty line) is bounded, not the stream. The CLI's
 * one-shot commands end within `--request-timeout` (its help: "every network request ends within
 * --request-timeout seconds").
 */
type Answer =
  | 'json-endless'
  | 'sse-endless-event'
  | 'json-trickle'
  | 'sse-trickle'
  | { sseEvents: number; eventBytes: number }
  | { jsonBytes: number };

interface McpHostile {
  url: string;
  /** Bytes of the tools/list answer the server got written into the socket. */
  sent: number;
  close(): Promise<void>;
}

const CHUNK = Buffer.alloc(64 * 1024, 'x');

/** An MCP server (no authorization) that answers initialize normally and tools/list as `answer`. */
async function mcpServer(answer: Answer): Promise<McpHostile> {
  const state = { sent: 0 };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d));
    req.on('end', () => {
      if (req.method !== 'POST') return res.writeHead(405).end();
      const msg = JSON.parse(body || '{}') as { id?: number; method?: string; params?: { protocolVersion?: string } };
      if (msg.method === 'initialize') {
        const result = {
          protocolVersion: msg.params?.protocolVersion,
          capabilities: { tools: {} },
          serverInfo: { name: 'h', version: '1' },
        };
        return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result }));
      }
      if (msg.id === undefined) return res.writeHead(202).end();
      const head = `{"jsonrpc":"2.0","id":${msg.id},"result":{"tools":[],"x":"`;
      const json = { 'content-type': 'application/json' };
      const sse = { 'content-type': 'text/event-stream' };
      const endless = (headers: Record<string, string>, prefix: string) => {
        res.writeHead(200, headers).write(prefix);
        const pump = () => {
          while (!res.destroyed) {
            state.sent += CHUNK.length;
            if (!res.write(CHUNK)) return void res.once('drain', pump);
          }
        };
        pump();
      };
      const trickle = (headers: Record<string, string>, prefix: string) => {
        res.writeHead(200, headers).write(prefix);
        const timer = setInterval(() => res.write('x'), 100);
        res.on('close', () => clearInterval(timer));
      };
      if (answer === 'json-endless') return endless(json, head);
      if (answer === 'sse-endless-event') return endless(sse, `event: message\ndata: ${head}`);
      if (answer === 'json-trickle') return trickle(json, head);
      if (answer === 'sse-trickle') return trickle(sse, `event: message\ndata: ${head}`);
      if ('jsonBytes' in answer) {
        const filler = 'x'.repeat(answer.jsonBytes);
        return res.writeHead(200, { 'content-type': 'application/json' }).end(`${head}${filler}"}}`);
      }
      // many events, each under the bound, together well over it: a long-lived stream keeps working
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const note = (i: number) =>
        `event: message\r\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"${i}${'y'.repeat(answer.eventBytes)}"}}\r\n\r\n`;
      for (let i = 0; i < answer.sseEvents; i++) res.write(note(i));
      res.end(`event: message\ndata: ${head}done"}}\n\n`);
    });
  });
  const base = await listen(server);
  return {
    url: `${base}/mcp`,
    get sent() {
      return state.sent;
    },
    close: () => close(server),
  };
}

const servers: McpHostile[] = [];
afterEach(async () => {
  while (servers.length) await servers.pop()!.close();
});
async function hostile(answer: Answer) {
  const s = await mcpServer(answer);
  servers.push(s);
  return s;
}

const listTools = (id = 7) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/list', params: {} });
const post = { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' } };

const MAX = 256 * 1024;

describe('McpAuthClient.fetch: MCP response bodies are bounded (review r46 F1)', () => {
  const client = () => new McpAuthClient({ clientName: 'bounds', requestTimeoutMs: 1500, maxMessageBytes: MAX });

  it('an endless JSON body is refused past maxMessageBytes; the client stopped reading', async () => {
    const s = await hostile('json-endless');
    const res = await client().fetch(s.url, { ...post, body: listTools() });
    const { err } = await refusal(res.text());
    expect(err.code).toBe(ERR.RESPONSE_TOO_LARGE);
    expect(err.message).toMatch(/the MCP server at http:\/\/127\.0\.0\.1:\d+ sent a response larger than 262144 bytes; refused/);
    await new Promise((r) => setTimeout(r, 200));
    // what the server could push: the bound plus what sockets and stream queues hold, far from endless
    expect(s.sent).toBeLessThan(MAX + 16 * 1024 * 1024);
  });

  it('one endless SSE event is refused past maxMessageBytes', async () => {
    const s = await hostile('sse-endless-event');
    const res = await client().fetch(s.url, { ...post, body: listTools() });
    const { err } = await refusal(res.text());
    expect(err.code).toBe(ERR.RESPONSE_TOO_LARGE);
    expect(err.message).toMatch(/sent a stream event larger than 262144 bytes; refused/);
    await new Promise((r) => setTimeout(r, 200));
    expect(s.sent).toBeLessThan(MAX + 16 * 1024 * 1024);
  });

  it('a JSON body trickled after its headers fails at requestTimeoutMs', async () => {
    const s = await hostile('json-trickle');
    const res = await client().fetch(s.url, { ...post, body: listTools() });
    const { err, ms } = await refusal(res.text());
    expect(err.code).toBe(ERR.SERVER_UNREACHABLE);
    expect(err.message).toMatch(/did not answer in time \(no complete answer within 1\.5 s\)/);
    expect(ms).toBeLessThan(4000);
  });

  it('an SSE stream has no overall bound: many events, together 4 × the bound, all arrive', async () => {
    const s = await hostile({ sseEvents: 64, eventBytes: MAX / 16 });
    const res = await client().fetch(s.url, { ...post, body: listTools() });
    const text = await res.text();
    expect(text.length).toBeGreaterThan(4 * MAX);
    expect(text).toContain('done');
  });

  it('a JSON body within the bound is read as before; one byte over is refused', async () => {
    const within = await hostile({ jsonBytes: MAX - 200 });
    expect((await (await client().fetch(within.url, { ...post, body: listTools() })).text()).length).toBeLessThanOrEqual(MAX);
    const over = await hostile({ jsonBytes: MAX });
    const { err } = await refusal((await client().fetch(over.url, { ...post, body: listTools() })).text());
    expect(err.code).toBe(ERR.RESPONSE_TOO_LARGE);
  });

  it('maxMessageBytes must be a finite number greater than 0; the default is 8 MiB', async () => {
    for (const bad of [0, -1, Number.POSITIVE_INFINITY, Number.NaN]) {
      expect(() => new McpAuthClient({ clientName: 'x', maxMessageBytes: bad })).toThrow(/"maxMessageBytes" must be a finite number/);
    }
  });
});

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
