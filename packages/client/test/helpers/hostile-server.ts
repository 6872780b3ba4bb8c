// Hostile HTTP servers on loopback for the request-bounds tests: answers that trickle, never
// come, or never end (generated on the fly, never held in memory).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { close, listen } from './harness.js';

export type Behaviour =
  /** Headers at once, then one byte of a JSON object every `everyMs` ms, for ever. */
  | { trickle: { everyMs: number } }
  /** The connection is accepted and nothing is ever sent. */
  | { silent: true }
  /** A JSON document of `bytes` bytes, sent chunk by chunk; with `declare`, Content-Length says so. */
  | { huge: { bytes: number; declare?: boolean } }
  | { json: unknown; status?: number };

export interface HostileServer {
  base: string;
  /** Bytes of the huge bodies actually written (the client stopped reading well before the end). */
  hugeBytesSent: number;
  /** Paths requested, in order. */
  seen: string[];
  close(): Promise<void>;
}

export async function startHostileServer(route: (path: string, base: string) => Behaviour | undefined): Promise<HostileServer> {
  const server = createServer();
  const base = await listen(server);
  const state: HostileServer = { base, hugeBytesSent: 0, seen: [], close: () => close(server) };
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    const path = new URL(req.url ?? '/', base).pathname;
    state.seen.push(path);
    const behaviour = route(path, base);
    if (!behaviour) return res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not_found"}');
    if ('silent' in behaviour) return undefined;
    if ('json' in behaviour) {
      return res.writeHead(behaviour.status ?? 200, { 'content-type': 'application/json' }).end(JSON.stringify(behaviour.json));
    }
    if ('trickle' in behaviour) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{');
      const timer = setInterval(() => res.write(' '), behaviour.trickle.everyMs);
      res.on('close', () => clearInterval(timer));
      return undefined;
    }
    const { bytes, declare } = behaviour.huge;
    res.writeHead(200, { 'content-type': 'application/json', ...(declare && { 'content-length': String(bytes) }) });
    const head = '{"issuer":"';
    const chunk = Buffer.alloc(64 * 1024, 'a');
    let left = bytes - head.length - 2;
    res.write(head);
    const pump = () => {
      while (left > 0 && !res.destroyed) {
        const piece = left >= chunk.length ? chunk : chunk.subarray(0, left);
        left -= piece.length;
        state.hugeBytesSent += piece.length;
        if (!res.write(piece)) return void res.once('drain', pump);
      }
      if (!res.destroyed) res.end('"}');
    };
    pump();
    return undefined;
  });
  return state;
}

/**
 * Routes of a server that is its own AS (PRM at `/mcp`'s well-known URL, RFC 8414 metadata with
 * `metadata` merged in); `token` is how its token endpoint behaves.
 */
export function oauthServer(token: Behaviour, metadata: Record<string, unknown> = {}) {
  return (path: string, base: string): Behaviour | undefined => {
    if (path === '/.well-known/oauth-protected-resource/mcp') return { json: { resource: `${base}/mcp`, authorization_servers: [base] } };
    if (path === '/.well-known/oauth-authorization-server') {
      return {
        json: {
          issuer: base,
          authorization_endpoint: `${base}/authorize`,
          token_endpoint: `${base}/token`,
          code_challenge_methods_supported: ['S256'],
          ...metadata,
        },
      };
    }
    if (path === '/token') return token;
    return undefined;
  };
}
