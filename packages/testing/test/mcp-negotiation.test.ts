/**
 * The kit's MCP requests against real SDK servers over loopback HTTP: which wire it speaks
 * (MCP 2026-07-28 Streamable HTTP §Backward Compatibility), the 2025-era handshake and its
 * headers (MCP 2025-11-25 Lifecycle §Initialization, Transports §Session Management and
 * §Protocol Version Header), extra headers, and what a failure shows.
 */
import { randomUUID } from 'node:crypto';
import express, { type NextFunction, type Request, type Response } from 'express';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { McpServer as McpServerV1 } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, McpServer as McpServerV2 } from '@modelcontextprotocol/server';
import { createResourceServer, type ResourceServer } from '@mcp-auth-kit/resource-server';
import {
  assertAuthorized,
  assertChallenge,
  callTool,
  encodeMcpHeaderValue,
  McpHandshakeError,
  mcpRequest,
  openMcpSession,
  ResponseAssertionError,
  startLoopbackServer,
  type LoopbackServer,
  type McpOutgoingRequest,
} from '@mcp-auth-kit/testing';

interface Seen {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: any;
}
let seen: Seen[] = [];
let listener: LoopbackServer;
let base: string;
let rs: ResourceServer;
const v1Sessions = new Map<string, StreamableHTTPServerTransport>();
const v2Handlers: { close(): Promise<void> }[] = [];

function v1Server(): McpServerV1 {
  const server = new McpServerV1({ name: 'v1', version: '1.0.0' });
  server.registerTool('whoami', { description: 'echo' }, () => ({ content: [{ type: 'text', text: 'v1' }] }));
  return server;
}
function v2Server(): McpServerV2 {
  const server = new McpServerV2({ name: 'v2', version: '1.0.0' });
  server.registerTool('whoami', { description: 'echo' }, () => ({ content: [{ type: 'text', text: 'v2' }] }));
  return server;
}
function v2Route(legacy: 'stateless' | 'reject') {
  const mcp = createMcpHandler(v2Server, { legacy });
  v2Handlers.push(mcp);
  const handle = toNodeHandler(mcp);
  return (req: Request, res: Response) => void handle(req, res, req.body);
}
async function v1Stateless(req: Request, res: Response) {
  const server = v1Server();
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  res.on('close', () => void transport.close().then(() => server.close()));
  await server.connect(transport);
  await transport.handleRequest(req, res, req.body);
}
// The SDK v1 README's stateful wiring.
async function v1Stateful(req: Request, res: Response) {
  const sessionId = req.header('mcp-session-id');
  let transport = sessionId === undefined ? undefined : v1Sessions.get(sessionId);
  if (!transport) {
    if (sessionId !== undefined || req.method !== 'POST' || !isInitializeRequest(req.body)) {
      res.status(400).json({ jsonrpc: '2.0', error: { code: -32000, message: 'Bad Request: No valid session ID provided' }, id: null });
      return;
    }
    const created: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => void v1Sessions.set(id, created),
    });
    created.onclose = () => void v1Sessions.delete(created.sessionId ?? '');
    await v1Server().connect(created);
    transport = created;
  }
  await transport.handleRequest(req, res, req.body);
}

/** A server of the 2026-07-28 era that still serves 2025-06-18 only through `initialize`: it names that in its -32022. */
function modernErrorThenLegacy(supported: string[]) {
  return async (req: Request, res: Response) => {
    if (req.body?.params?._meta?.['io.modelcontextprotocol/protocolVersion'] !== undefined) {
      const requested = req.body.params._meta['io.modelcontextprotocol/protocolVersion'];
      res.status(400).json({
        jsonrpc: '2.0',
        id: req.body.id,
        error: { code: -32022, message: `Unsupported protocol version: ${requested}`, data: { supported, requested } },
      });
      return;
    }
    await v1Stateless(req, res);
  };
}

beforeAll(async () => {
  listener = await startLoopbackServer();
  base = listener.origin;
  // No token is valid here (the issuer does not exist): only the refusal paths are used.
  rs = createResourceServer({
    resource: `${base}/protected`,
    authorizationServers: ['http://127.0.0.1:9'],
    scopePolicy: { default: ['notes:read'] },
  });
  const app = express();
  app.post('/protected', rs.protect, v1Stateless);
  app.use(express.json());
  app.use((req: Request, _res: Response, next: NextFunction) => {
    seen.push({ method: req.method, path: req.path, headers: { ...req.headers }, body: req.body });
    next();
  });
  app.post('/v1/stateless', v1Stateless);
  app.all('/v1/stateful', v1Stateful);
  app.all('/v2', v2Route('stateless'));
  app.all('/v2-modern-only', v2Route('reject'));
  app.post('/names-2025-06-18', modernErrorThenLegacy(['2099-01-01', '2025-06-18']));
  app.post('/names-only-unknown', modernErrorThenLegacy(['2099-01-01']));
  listener.handle(app);
});
afterAll(async () => {
  for (const transport of v1Sessions.values()) await transport.close();
  for (const handler of v2Handlers) await handler.close();
  await rs?.close();
  await listener?.close();
});
beforeEach(() => {
  seen = [];
});

const steps = (res: { exchanges: { method?: string; httpMethod: string; protocolVersion: string; status: number }[] }) =>
  res.exchanges.map((e) => `${e.method ?? e.httpMethod} ${e.protocolVersion} ${e.status}`);

describe('SDK v1 (@modelcontextprotocol/sdk StreamableHTTPServerTransport)', () => {
  it('§Backward Compatibility: a bare 400 to the 2026-07-28 request → initialize (2025-11-25), notifications/initialized, the request', async () => {
    const res = await callTool(`${base}/v1/stateless`, { name: 'whoami' });
    assertAuthorized(res);
    expect(res.body.result.content[0].text).toBe('v1');
    expect(res.headers.get('content-type')).toContain('text/event-stream'); // SDK v1 answers with SSE by default
    expect(steps(res)).toEqual([
      'tools/call 2026-07-28 400',
      'initialize 2025-11-25 200',
      'notifications/initialized 2025-11-25 202',
      'tools/call 2025-11-25 200',
    ]);
    const [probe, init, initialized, call] = seen;
    expect(probe!.headers).toMatchObject({ 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'whoami' });
    expect(probe!.body.params._meta['io.modelcontextprotocol/protocolVersion']).toBe('2026-07-28');
    expect(init!.body).toMatchObject({
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'mcp-auth-kit-testing' } },
    });
    // Lifecycle: the version header follows the handshake, it does not precede it.
    expect(init!.headers['mcp-protocol-version']).toBeUndefined();
    expect(initialized!.body).toEqual({ jsonrpc: '2.0', method: 'notifications/initialized' });
    for (const later of [initialized!, call!]) {
      expect(later.headers['mcp-protocol-version']).toBe('2025-11-25');
      expect(later.headers['mcp-session-id']).toBeUndefined();
      expect(later.headers['mcp-method']).toBeUndefined();
    }
    expect(call!.body.params).toEqual({ name: 'whoami', arguments: {} });
  });

  it('§Session Management: the Mcp-Session-Id of the InitializeResult goes on every later request; DELETE ends the session', async () => {
    const res = await callTool(`${base}/v1/stateful`, { name: 'whoami' });
    assertAuthorized(res);
    expect(res.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(steps(res)).toEqual([
      'tools/call 2026-07-28 400',
      'initialize 2025-11-25 200',
      'notifications/initialized 2025-11-25 202',
      'tools/call 2025-11-25 200',
    ]);
    expect(seen.map((s) => `${s.method} ${s.headers['mcp-session-id'] ?? '-'}`)).toEqual([
      'POST -',
      'POST -',
      `POST ${res.sessionId}`,
      `POST ${res.sessionId}`,
      `DELETE ${res.sessionId}`,
    ]);
    expect(seen[4]!.headers['mcp-protocol-version']).toBe('2025-11-25');
    expect(v1Sessions.size).toBe(0);
  });

  it('a pinned 2025 version: no 2026-07-28 attempt, initialize offers it', async () => {
    const res = await callTool(`${base}/v1/stateful`, { name: 'whoami', protocolVersion: '2025-06-18' });
    assertAuthorized(res);
    expect(steps(res)).toEqual(['initialize 2025-06-18 200', 'notifications/initialized 2025-06-18 202', 'tools/call 2025-06-18 200']);
    expect(seen[2]!.headers['mcp-protocol-version']).toBe('2025-06-18');
  });

  it('issue 20: pinned 2026-07-28 against SDK v1 → the 400 is returned and the failed assertion shows status, headers and body', async () => {
    const res = await callTool(`${base}/v1/stateless`, { name: 'whoami', protocolVersion: '2026-07-28' });
    expect(steps(res)).toEqual(['tools/call 2026-07-28 400']);
    let error: unknown;
    try {
      assertAuthorized(res);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ResponseAssertionError);
    const message = (error as Error).message;
    expect(message).toMatch(/^expected the request to be authorized, got HTTP 400\n/);
    expect(message).toContain('Response: HTTP 400');
    expect(message).toContain('  content-type: application/json');
    expect(message).toContain('Bad Request: Unsupported protocol version: 2026-07-28');
  });

  it('Lifecycle §Version Negotiation: the server answers another version than the pinned one → McpHandshakeError showing the InitializeResult', async () => {
    const error = await callTool(`${base}/v1/stateless`, { name: 'whoami', protocolVersion: '2024-01-01' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpHandshakeError);
    expect((error as McpHandshakeError).message).toMatch(
      /^initialize: the server chose protocol version 2025-11-25, not the pinned 2024-01-01\n/,
    );
    expect((error as McpHandshakeError).message).toContain('"protocolVersion":"2025-11-25"');
  });
});

describe('SDK v2 (@modelcontextprotocol/server createMcpHandler)', () => {
  it('one request on the 2026-07-28 wire: _meta envelope, Mcp-Method, Mcp-Name', async () => {
    const res = await callTool(`${base}/v2`, { name: 'whoami' });
    assertAuthorized(res);
    expect(res.body.result.content[0].text).toBe('v2');
    expect(steps(res)).toEqual(['tools/call 2026-07-28 200']);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.headers).toMatchObject({ 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'whoami' });
  });

  it('§Value Encoding: a tool name outside header-safe ASCII goes as =?base64?…?= and the server matches it with the body', async () => {
    // SDK v2 warns about the name (SEP-986) and registers it anyway.
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const mcp = createMcpHandler(() => {
      const server = new McpServerV2({ name: 'v2', version: '1.0.0' });
      server.registerTool('grüßen', { description: 'non-ASCII name' }, () => ({ content: [{ type: 'text', text: 'hallo' }] }));
      return server;
    });
    const other = await startLoopbackServer(toNodeHandler(mcp));
    try {
      const res = await callTool(`${other.origin}/`, { name: 'grüßen' });
      assertAuthorized(res);
      expect(res.body.result.content[0].text).toBe('hallo');
    } finally {
      await mcp.close();
      await other.close();
      warn.mockRestore();
    }
  });

  it('a 2026-only error (-32020 HeaderMismatch) is the answer: no fallback', async () => {
    const res = await callTool(`${base}/v2`, { name: 'whoami', headers: { 'mcp-name': 'other' } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe(-32020);
    expect(steps(res)).toEqual(['tools/call 2026-07-28 400']);
  });

  it('a pinned 2025 version against a modern-only endpoint: its -32022 refusal of initialize is returned', async () => {
    const res = await callTool(`${base}/v2-modern-only`, { name: 'whoami', protocolVersion: '2025-11-25' });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: -32022, data: { supported: ['2026-07-28'] } });
    expect(steps(res)).toEqual(['initialize 2025-11-25 400']);
  });

  it('a pinned later version on the stateless wire is sent as is, without fallback', async () => {
    const res = await callTool(`${base}/v2`, { name: 'whoami', protocolVersion: '2026-09-01' });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe(-32022);
    expect(steps(res)).toEqual(['tools/call 2026-09-01 400']);
  });
});

describe('other answers to the 2026-07-28 request', () => {
  it('§Backward Compatibility: -32022 naming supported versions → initialize with a version both speak', async () => {
    const res = await callTool(`${base}/names-2025-06-18`, { name: 'whoami' });
    assertAuthorized(res);
    expect(steps(res)).toEqual([
      'tools/call 2026-07-28 400',
      'initialize 2025-06-18 200',
      'notifications/initialized 2025-06-18 202',
      'tools/call 2025-06-18 200',
    ]);
  });

  it('-32022 naming only versions the kit does not speak → that response is the answer', async () => {
    const res = await callTool(`${base}/names-only-unknown`, { name: 'whoami' });
    expect(res.status).toBe(400);
    expect(res.body.error.data.supported).toEqual(['2099-01-01']);
    expect(steps(res)).toEqual(['tools/call 2026-07-28 400']);
  });

  it('RFC 6750 §3.1: a 400 invalid_request challenge from the authorization layer is returned, not retried on another wire', async () => {
    const res = await callTool(`${base}/protected`, { name: 'whoami', headers: { authorization: 'Bearer' } });
    assertChallenge(res, { status: 400, error: 'invalid_request' });
    expect(steps(res)).toEqual(['tools/call 2026-07-28 400']);
  });

  it('401 without a token is returned from the first request', async () => {
    const res = await mcpRequest(`${base}/protected`, { method: 'tools/list' });
    expect(res.status).toBe(401);
    expect(steps(res)).toEqual(['tools/list 2026-07-28 401']);
  });
});

describe('extra headers', () => {
  it("a record goes on every request of the call, overriding the kit's own", async () => {
    await callTool(`${base}/v1/stateful`, { name: 'whoami', headers: { 'x-tenant': 't1', accept: 'application/json, text/event-stream' } });
    expect(seen).toHaveLength(5);
    for (const request of seen) expect(request.headers['x-tenant']).toBe('t1');
  });

  it("RFC 9110 §5.1: an override in another letter case replaces the kit's header instead of adding a second value", async () => {
    await callTool(`${base}/v2`, {
      name: 'whoami',
      token: 'kit-token',
      headers: { Authorization: 'DPoP bound-token', 'Mcp-Method': 'tools/call' },
    });
    expect(seen[0]!.headers.authorization).toBe('DPoP bound-token');
    expect(seen[0]!.headers['mcp-method']).toBe('tools/call');
  });

  it('a function is called once per HTTP request with what is being sent (for per-request values like DPoP proofs)', async () => {
    const calls: McpOutgoingRequest[] = [];
    let n = 0;
    await callTool(`${base}/v1/stateful`, {
      name: 'whoami',
      headers: (request) => {
        calls.push(request);
        return { 'x-proof': `proof-${n++}` };
      },
    });
    expect(seen.map((s) => s.headers['x-proof'])).toEqual(['proof-0', 'proof-1', 'proof-2', 'proof-3', 'proof-4']);
    const sessionId = calls[2]!.sessionId;
    expect(sessionId).toBeDefined();
    expect(calls).toEqual([
      { httpMethod: 'POST', method: 'tools/call', protocolVersion: '2026-07-28' },
      { httpMethod: 'POST', method: 'initialize', protocolVersion: '2025-11-25' },
      { httpMethod: 'POST', method: 'notifications/initialized', protocolVersion: '2025-11-25', sessionId },
      { httpMethod: 'POST', method: 'tools/call', protocolVersion: '2025-11-25', sessionId },
      { httpMethod: 'DELETE', protocolVersion: '2025-11-25', sessionId },
    ]);
  });
});

describe('openMcpSession', () => {
  it('SDK v2: server/discover answers on the 2026-07-28 wire; requests need no handshake', async () => {
    const session = await openMcpSession(`${base}/v2`);
    expect(session.protocolVersion).toBe('2026-07-28');
    expect(session.sessionId).toBeUndefined();
    const res = await session.callTool({ name: 'whoami' });
    expect(steps(res)).toEqual(['tools/call 2026-07-28 200']);
    await session.close();
    expect(seen.map((s) => s.body?.method ?? s.method)).toEqual(['server/discover', 'tools/call']);
  });

  it('SDK v1 stateful: several requests in one session, per-request headers, DELETE on close', async () => {
    const session = await openMcpSession(`${base}/v1/stateful`, { headers: { 'x-tenant': 't1' } });
    expect(session.protocolVersion).toBe('2025-11-25');
    expect(session.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    assertAuthorized(await session.callTool({ name: 'whoami' }));
    const list = await session.request({ method: 'tools/list', headers: { 'x-tenant': 't2' } });
    expect(list.body.result.tools.map((t: { name: string }) => t.name)).toEqual(['whoami']);
    expect(list.sessionId).toBe(session.sessionId);
    await session.close();
    await session.close(); // once only
    expect(seen.map((s) => `${s.body?.method ?? s.method} ${s.headers['x-tenant']}`)).toEqual([
      'server/discover t1',
      'initialize t1',
      'notifications/initialized t1',
      'tools/call t1',
      'tools/list t2',
      'DELETE t1',
    ]);
    expect(v1Sessions.size).toBe(0);
  });

  it('a refused handshake throws McpHandshakeError showing the response', async () => {
    const error = await openMcpSession(`${base}/protected`).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpHandshakeError);
    const message = (error as McpHandshakeError).message;
    expect(message).toMatch(/^server\/discover on the 2026-07-28 wire was refused\n/);
    expect(message).toContain('Response: HTTP 401');
    expect(message).toMatch(/ {2}www-authenticate: Bearer /);
    expect((error as McpHandshakeError).response.status).toBe(401);
  });
});

describe("encodeMcpHeaderValue (2026-07-28 Streamable HTTP §Value Encoding, the spec's table)", () => {
  it.each([
    ['us-west1', 'us-west1'],
    ['Hello, 世界', '=?base64?SGVsbG8sIOS4lueVjA==?='],
    [' padded ', '=?base64?IHBhZGRlZCA=?='],
    ['line1\nline2', '=?base64?bGluZTEKbGluZTI=?='],
    ['=?base64?literal?=', '=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?='],
  ])('%j → %s', (value, encoded) => {
    expect(encodeMcpHeaderValue(value)).toBe(encoded);
  });
});
