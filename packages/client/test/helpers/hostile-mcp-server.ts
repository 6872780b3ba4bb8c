// A hostile MCP server on loopback for the MCP body-bound tests of the client and the CLI: it
// answers initialize normally and tools/list with an answer that is endless, trickled, or of a
// given size (generated on the fly, never held in memory).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { close, listen } from './harness.js';

export type Answer =
  | 'json-endless'
  | 'sse-endless-event'
  | 'json-trickle'
  | 'sse-trickle'
  | { sseEvents: number; eventBytes: number }
  | { jsonBytes: number };

export interface McpHostile {
  url: string;
  /** Bytes of the tools/list answer the server got written into the socket. */
  sent: number;
  close(): Promise<void>;
}

const CHUNK = Buffer.alloc(64 * 1024, 'x');

/** An MCP server (no authorization) that answers initialize normally and tools/list as `answer`. */
export async function startHostileMcpServer(answer: Answer): Promise<McpHostile> {
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
