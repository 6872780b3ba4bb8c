// Loopback MCP servers built with the real SDKs whose tool needs the user to visit a page first
// (a third-party connection, say): it answers with a URL elicitation until the page at
// `<server>/connect/<id>` was visited, then succeeds. One server per wire and mechanism:
//  - SDK v1, stateful sessions (2025-11-25): `files` fails with -32042 (URLElicitationRequiredError),
//    `ask` sends a server-initiated `elicitation/create` in URL mode; visiting the page sends
//    `notifications/elicitation/complete` for its id when `notify` is set;
//  - SDK v2, createMcpHandler (2026-07-28 and the stateless 2025-11-25 fallback): `files` answers
//    with an `InputRequiredResult` (`inputRequired.elicitUrl`, `requestState`), `files_error`
//    throws URLElicitationRequiredError.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { McpServer as McpServerV1 } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { UrlElicitationRequiredError as UrlElicitationRequiredV1 } from '@modelcontextprotocol/sdk/types.js';
import { toNodeHandler } from '@modelcontextprotocol/node';
import {
  createMcpHandler,
  inputRequired,
  inputResponse,
  McpServer as McpServerV2,
  UrlElicitationRequiredError,
} from '@modelcontextprotocol/server';
import { close, listen } from './harness.js';

export interface ElicitingServer {
  /** The MCP endpoint. */
  url: string;
  /** The page the tools send the user to (`<origin>/connect`; the id is appended). */
  connectBase: string;
  /** True once the page was visited: the tools then succeed. */
  connected: boolean;
  /** Replaces the URL the tools send (hostile URL tests); default `<connectBase>/<id>`. */
  url_override?: string;
  /** The message of the elicitation. */
  message: string;
  /** SDK v1: send `notifications/elicitation/complete` when the page is visited. */
  notify: boolean;
  /** Every page visit, in order. */
  visits: string[];
  /** Every tool call: the tool, and (SDK v2) the `inputResponses` and `requestState` it carried. */
  calls: { tool: string; inputResponses?: Record<string, unknown> | undefined; requestState?: unknown }[];
  /** Answers of server-initiated `elicitation/create` (SDK v1 `ask`). */
  answers: string[];
  /** The client capabilities the SDK v1 server saw at `initialize`. */
  capabilities?: Record<string, unknown> | undefined;
  close(): Promise<void>;
}

const DONE = { content: [{ type: 'text' as const, text: 'your files: a.txt, b.txt' }] };

function state(url: string): ElicitingServer {
  const origin = new URL(url).origin;
  return {
    url,
    connectBase: `${origin}/connect`,
    connected: false,
    message: 'Connect your drive account to continue',
    notify: true,
    visits: [],
    calls: [],
    answers: [],
    close: async () => undefined,
  };
}

/** The connect page: a visit marks the server connected (and tells `onVisit` the id). */
function connectPage(s: ElicitingServer, req: IncomingMessage, res: ServerResponse, onVisit?: (id: string) => void): boolean {
  const path = new URL(req.url ?? '/', 'http://x').pathname;
  if (!path.startsWith('/connect/')) return false;
  const id = path.slice('/connect/'.length);
  s.visits.push(id);
  s.connected = true;
  onVisit?.(id);
  res.writeHead(200, { 'content-type': 'text/plain' }).end('connected: you may return to your app');
  return true;
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  let body = '';
  for await (const chunk of req) body += chunk;
  return body ? JSON.parse(body) : undefined;
}

/** SDK v1 (`@modelcontextprotocol/sdk`), stateful Streamable HTTP sessions: the 2025-11-25 wire. */
export async function startV1ElicitingServer(): Promise<ElicitingServer> {
  const http: Server = createServer();
  const base = await listen(http);
  const s = state(`${base}/mcp`);
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const notifiers = new Map<string, () => Promise<void>>();
  const pageUrl = (id: string) => s.url_override ?? `${s.connectBase}/${id}`;

  const newServer = () => {
    const server = new McpServerV1({ name: 'eliciting-v1', version: '1.0.0' });
    server.registerTool('files', { description: 'lists your drive files' }, async () => {
      s.calls.push({ tool: 'files' });
      s.capabilities = server.server.getClientCapabilities();
      if (s.connected) return DONE;
      const elicitationId = randomUUID();
      notifiers.set(elicitationId, server.server.createElicitationCompletionNotifier(elicitationId));
      throw new UrlElicitationRequiredV1([{ mode: 'url', elicitationId, url: pageUrl(elicitationId), message: s.message }]);
    });
    server.registerTool('ask', { description: 'asks for the page by elicitation/create' }, async (extra) => {
      s.calls.push({ tool: 'ask' });
      if (s.connected) return DONE;
      const elicitationId = randomUUID();
      notifiers.set(elicitationId, server.server.createElicitationCompletionNotifier(elicitationId));
      // on the answer stream of this tools/call: a request not related to one goes on the GET
      // stream, and is dropped when the client has not opened that yet
      const answer = await server.server.elicitInput(
        { mode: 'url', elicitationId, url: pageUrl(elicitationId), message: s.message },
        { relatedRequestId: extra.requestId },
      );
      s.answers.push(answer.action);
      return { content: [{ type: 'text' as const, text: `answer: ${answer.action}` }] };
    });
    return server;
  };

  http.on('request', async (req, res) => {
    if (
      connectPage(
        s,
        req,
        res,
        (id) =>
          void (
            s.notify &&
            notifiers
              .get(id)?.()
              .catch(() => undefined)
          ),
      )
    )
      return;
    const sessionId = req.headers['mcp-session-id'];
    const known = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
    if (known) return void (await known.handleRequest(req, res, req.method === 'POST' ? await readJson(req) : undefined));
    if (req.method !== 'POST') return void res.writeHead(400).end();
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (id) => void sessions.set(id, transport),
    });
    await newServer().connect(transport);
    await transport.handleRequest(req, res, await readJson(req));
  });
  s.close = async () => {
    for (const t of sessions.values()) await t.close();
    await close(http);
  };
  return s;
}

/** SDK v2 (`@modelcontextprotocol/server`), createMcpHandler: the 2026-07-28 wire and the stateless 2025-11-25 one. */
export async function startV2ElicitingServer(): Promise<ElicitingServer> {
  const http: Server = createServer();
  const base = await listen(http);
  const s = state(`${base}/mcp`);
  const pageUrl = (id: string) => s.url_override ?? `${s.connectBase}/${id}`;

  const newServer = () => {
    const server = new McpServerV2({ name: 'eliciting-v2', version: '1.0.0' });
    server.registerTool('files', { description: 'lists your drive files' }, async (ctx) => {
      s.calls.push({ tool: 'files', inputResponses: ctx.mcpReq.inputResponses, requestState: ctx.mcpReq.requestState() });
      if (s.connected) return DONE;
      const answer = inputResponse(ctx.mcpReq.inputResponses, 'connect');
      if (answer.kind === 'elicit' && answer.action !== 'accept') {
        return { isError: true, content: [{ type: 'text' as const, text: `not connected: ${answer.action}` }] };
      }
      return inputRequired({
        inputRequests: { connect: inputRequired.elicitUrl({ message: s.message, url: pageUrl(randomUUID()) }) },
        requestState: 'opaque-state-1',
      });
    });
    server.registerTool('files_error', { description: 'lists your drive files (-32042)' }, async () => {
      s.calls.push({ tool: 'files_error' });
      if (s.connected) return DONE;
      const elicitationId = randomUUID();
      throw new UrlElicitationRequiredError([{ mode: 'url', elicitationId, url: pageUrl(elicitationId), message: s.message }]);
    });
    return server;
  };
  const handler = toNodeHandler(createMcpHandler(newServer, { legacy: 'stateless' }));
  http.on('request', (req, res) => {
    if (connectPage(s, req, res)) return;
    void handler(req, res);
  });
  s.close = () => close(http);
  return s;
}
