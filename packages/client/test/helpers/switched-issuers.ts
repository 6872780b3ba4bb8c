// An MCP server whose PRM names a fourth authorization server after three others (review r46
// F2), for the logout tests of the client and the CLI: `issuers()` serves the PRM and the metadata
// and revocation endpoints of every `/as<n>`; `afterTwoSwitches` fills a store as that history
// leaves it.
import { createServer } from 'node:http';
import type { AuthStore, ServerBinding } from '../../src/store.js';
import { close, listen } from './harness.js';

export interface Issuers {
  base: string;
  /** Revocation requests per issuer path (`/as1`, `/as2`, ...), with the token sent. */
  revoked: Array<{ issuer: string; token: string }>;
  close(): Promise<void>;
}

export async function issuers(): Promise<Issuers> {
  const revoked: Issuers['revoked'] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d));
    req.on('end', () => {
      const path = new URL(req.url ?? '/', base).pathname;
      if (path === '/.well-known/oauth-protected-resource/mcp') {
        // the server names as4 now (RFC 9728: the PRM's authorization_servers)
        const prm = { resource: `${base}/mcp`, authorization_servers: [`${base}/as4`] };
        return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(prm));
      }
      const meta = /^\/\.well-known\/oauth-authorization-server(\/as\d+)$/.exec(path);
      if (meta) {
        const issuer = `${base}${meta[1]}`;
        const doc = {
          issuer,
          authorization_endpoint: `${issuer}/authorize`,
          token_endpoint: `${issuer}/token`,
          revocation_endpoint: `${issuer}/revoke`,
          code_challenge_methods_supported: ['S256'],
        };
        return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(doc));
      }
      const revoke = /^(\/as\d+)\/revoke$/.exec(path);
      if (revoke) {
        revoked.push({ issuer: revoke[1]!, token: new URLSearchParams(body).get('token') ?? '' });
        return res.writeHead(200).end();
      }
      return res.writeHead(404).end();
    });
  });
  const base = await listen(server);
  return { base, revoked, close: () => close(server) };
}

/** The store after a server at `base` named as1, then as2, then as3 (bound now): three grants, three registrations. */
export async function afterTwoSwitches(store: AuthStore, base: string): Promise<ServerBinding> {
  const resource = `${base}/mcp`;
  for (const n of [1, 2, 3]) {
    const issuer = `${base}/as${n}`;
    await store.setClient({ issuer, client_id: `c${n}`, client_secret: `secret${n}`, source: 'dcr' });
    await store.setTokens({ issuer, resource, access_token: `at${n}`, refresh_token: `rt${n}`, token_type: 'Bearer', client_id: `c${n}` });
  }
  const issuer = `${base}/as3`;
  const binding: ServerBinding = {
    server: resource,
    resource,
    issuer,
    as_metadata: {
      issuer,
      authorization_endpoint: `${issuer}/authorize`,
      token_endpoint: `${issuer}/token`,
      revocation_endpoint: `${issuer}/revoke`,
      code_challenge_methods_supported: ['S256'],
    },
  };
  await store.setServer(binding);
  // another server's grant at another AS: logging out of the first leaves it alone
  await store.setClient({ issuer: `${base}/as9`, client_id: 'c9', source: 'dcr' });
  await store.setTokens({ issuer: `${base}/as9`, resource: `${base}/other`, access_token: 'at9', token_type: 'Bearer', client_id: 'c9' });
  await store.setServer({ ...binding, server: `${base}/other`, resource: `${base}/other`, issuer: `${base}/as9` });
  return binding;
}
