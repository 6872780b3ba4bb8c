/**
 * One MCP request over Streamable HTTP on the stateless 2026-07-28 wire (`_meta` envelope,
 * `Mcp-Method` / `Mcp-Name` headers), with or without a bearer token: enough to test a
 * protected endpoint without an MCP client session.
 */
export const MCP_PROTOCOL_VERSION = '2026-07-28';

export interface McpRequestOptions {
  /** Access token sent as `Authorization: Bearer …`; omit to test the unauthenticated path. */
  token?: string;
  method: string;
  params?: Record<string, unknown>;
  headers?: Record<string, string>;
}

export interface McpResponse {
  status: number;
  headers: Headers;
  /** The JSON-RPC message (JSON body or last SSE `data:` event), or the JSON error body. */
  body: any;
}

let nextId = 1;

async function readBody(res: Response): Promise<unknown> {
  const text = await res.text();
  if (text === '') return undefined;
  if ((res.headers.get('content-type') ?? '').includes('text/event-stream')) {
    const events = text
      .split(/\r?\n/)
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).trim())
      .filter(Boolean);
    return events.length ? JSON.parse(events.at(-1)!) : undefined;
  }
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export async function mcpRequest(url: string, o: McpRequestOptions): Promise<McpResponse> {
  const meta = {
    'io.modelcontextprotocol/protocolVersion': MCP_PROTOCOL_VERSION,
    'io.modelcontextprotocol/clientInfo': { name: 'mcp-auth-kit-testing', version: '0.1.0' },
    'io.modelcontextprotocol/clientCapabilities': {},
  };
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': MCP_PROTOCOL_VERSION,
    'mcp-method': o.method,
    ...(o.token !== undefined && { authorization: `Bearer ${o.token}` }),
    ...o.headers,
  };
  const res = await fetch(url, {
    method: 'POST',
    headers,
    body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method: o.method, params: { ...o.params, _meta: meta } }),
  });
  return { status: res.status, headers: res.headers, body: await readBody(res) };
}

/** `tools/call` for `name`; the result is in `body.result` when the call went through. */
export function callTool(url: string, o: { token?: string; name: string; arguments?: Record<string, unknown> }): Promise<McpResponse> {
  return mcpRequest(url, {
    token: o.token,
    method: 'tools/call',
    params: { name: o.name, arguments: o.arguments ?? {} },
    headers: { 'mcp-name': o.name },
  });
}
