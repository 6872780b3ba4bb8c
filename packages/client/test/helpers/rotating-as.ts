// A loopback AS with only what a refresh race needs (metadata, a token endpoint that rotates
// refresh tokens), for the tests of one redemption across processes (OAuth 2.1 §4.3.1).
import { createServer } from 'node:http';
import { FileStore, McpAuthClient } from '../../src/index.js';
import { close, listen } from './harness.js';

export interface RotatingAs {
  /** Issuer, and origin of the protected resource `${base}/mcp` it also describes. */
  base: string;
  /** Every refresh token redeemed, in order. */
  redeemed: string[];
  close(): Promise<void>;
}

/**
 * Answers refreshes after `delayMs`. `refuseReuse`: a refresh token already redeemed (or never
 * issued) is refused with invalid_grant, as a rotating AS does.
 */
export async function startRotatingAs(delayMs: number, { refuseReuse = false } = {}): Promise<RotatingAs> {
  const server = createServer();
  const base = await listen(server);
  let n = 0;
  const redeemed: string[] = [];
  const live = new Set<string>();
  server.on('request', async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const path = new URL(req.url!, base).pathname;
    const json = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (path === '/.well-known/oauth-protected-resource/mcp') {
      return json(200, { resource: `${base}/mcp`, authorization_servers: [base] });
    }
    if (path === '/.well-known/oauth-authorization-server') {
      return json(200, { issuer: base, token_endpoint: `${base}/token`, code_challenge_methods_supported: ['S256'] });
    }
    if (path !== '/token') return json(404, {});
    const body = new URLSearchParams(Buffer.concat(chunks).toString());
    if (body.get('grant_type') === 'refresh_token') {
      const rt = body.get('refresh_token')!;
      redeemed.push(rt);
      await new Promise((r) => setTimeout(r, delayMs));
      if (!live.delete(rt) && refuseReuse) return json(400, { error: 'invalid_grant' });
    }
    n++;
    live.add(`rt-${n}`);
    return json(200, { access_token: `at-${n}`, token_type: 'Bearer', expires_in: 3600, refresh_token: `rt-${n}` });
  });
  return { base, redeemed, close: () => close(server) };
}

/** A client-credentials client of `issuer` on the file store at `path`, as each process of a race makes it. */
export const fileStoreClient = (issuer: string, path: string, options: { expirySkewSeconds?: number } = {}) =>
  new McpAuthClient({
    clientName: 'lock test',
    store: new FileStore(path),
    clientCredentials: { client_id: 'm2m', client_secret: 's', issuer },
    ...options,
  });
