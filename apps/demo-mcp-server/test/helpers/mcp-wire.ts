/** Raw Streamable HTTP requests on both wires, for tests that check exact HTTP behaviour. */

export const LEGACY_VERSION = '2025-11-25';
export const MODERN_VERSION = '2026-07-28';

export interface WireResponse {
  status: number;
  headers: Headers;
  /** The JSON-RPC message (from a JSON body or the last SSE `data:` event), or the JSON body. */
  body: any;
}

async function readBody(res: Response): Promise<unknown> {
  const text = await res.text();
  if (text === '') return undefined;
  if ((res.headers.get('content-type') ?? '').includes('text/event-stream')) {
    const events = text
      .split(/\r?\n/)
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).trim())
      .filter((data) => data.length > 0);
    return events.length > 0 ? JSON.parse(events.at(-1)!) : undefined;
  }
  return JSON.parse(text);
}

export async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<WireResponse> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, body: await readBody(res) };
}

export const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });

/** The 2025-11-25 wire: an initialize handshake, then plain requests with the version header. */
export function legacyClient(url: string, token: string) {
  let nextId = 1;
  const headers = () => ({ ...bearer(token), 'mcp-protocol-version': LEGACY_VERSION });
  return {
    initialize: () =>
      post(
        url,
        {
          jsonrpc: '2.0',
          id: nextId++,
          method: 'initialize',
          params: { protocolVersion: LEGACY_VERSION, capabilities: {}, clientInfo: { name: 'raw-test', version: '1.0.0' } },
        },
        bearer(token),
      ),
    initialized: () => post(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers()),
    request: (method: string, params: Record<string, unknown> = {}) =>
      post(url, { jsonrpc: '2.0', id: nextId++, method, params }, headers()),
    callTool: (name: string, args: Record<string, unknown> = {}) =>
      post(url, { jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { name, arguments: args } }, headers()),
  };
}

/** The 2026-07-28 stateless wire: `_meta` envelope on every request, Mcp-Method / Mcp-Name headers. */
export function modernClient(url: string, token: string) {
  let nextId = 1;
  const meta = {
    'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
    'io.modelcontextprotocol/clientInfo': { name: 'raw-test', version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': {},
  };
  const send = (method: string, params: Record<string, unknown>, extraHeaders: Record<string, string> = {}) =>
    post(
      url,
      { jsonrpc: '2.0', id: nextId++, method, params: { ...params, _meta: meta } },
      { ...bearer(token), 'mcp-protocol-version': MODERN_VERSION, 'mcp-method': method, ...extraHeaders },
    );
  return {
    request: (method: string, params: Record<string, unknown> = {}) => send(method, params),
    callTool: (name: string, args: Record<string, unknown> = {}, mcpName = name) =>
      send('tools/call', { name, arguments: args }, { 'mcp-name': mcpName }),
  };
}
