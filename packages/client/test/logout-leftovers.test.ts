import { createServer } from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { run } from '../src/cli/program.js';
import { FileStore } from '../src/file-store.js';
import { McpAuthClient } from '../src/index.js';
import { MemoryStore, type AuthStore, type ServerBinding } from '../src/store.js';
import { close, listen } from './helpers/harness.js';

/**
 * Review r46 F2: an MCP server that names another authorization server (MCP Authorization Server
 * Discovery: the PRM's `authorization_servers` may change) leaves the tokens and the client
 * registration of the earlier AS in the store. `logout <url>` must revoke (RFC 7009, best effort)
 * and delete every token kept for that server's resource, whatever issuer it is stored under, and
 * `logout` everything; a registration nothing refers to any more goes too.
 */
interface Issuers {
  base: string;
  /** Revocation requests per issuer path (`/as1`, `/as2`, ...), with the token sent. */
  revoked: Array<{ issuer: string; token: string }>;
  close(): Promise<void>;
}

async function issuers(): Promise<Issuers> {
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

let stop: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const s of stop) await s();
  stop = [];
});

/** The store after a server at `base` named as1, then as2, then as3 (bound now): three grants, three registrations. */
async function afterTwoSwitches(store: AuthStore, base: string): Promise<ServerBinding> {
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

describe('logout after the MCP server switched authorization server (review r46 F2)', () => {
  it('logout <url> revokes and deletes the grants of every issuer the server named, and their registrations', async () => {
    const as = await issuers();
    stop.push(() => as.close());
    const store = new MemoryStore();
    const binding = await afterTwoSwitches(store, as.base);
    await new McpAuthClient({ clientName: 'logout test', store }).logout(binding.server);

    expect((await store.listTokens()).map((t) => t.access_token)).toEqual(['at9']);
    // the registration at the AS the server names now is kept for the next login (as before)
    expect((await store.listClients()).map((c) => c.client_id).sort()).toEqual(['c3', 'c9']);
    // RFC 7009 at each issuer that granted one: the current AS and the two earlier ones
    expect(as.revoked.sort((a, b) => a.issuer.localeCompare(b.issuer))).toEqual([
      { issuer: '/as1', token: 'rt1' },
      { issuer: '/as2', token: 'rt2' },
      { issuer: '/as3', token: 'rt3' },
    ]);
  });

  it('logout without a URL deletes every token record, bound to a server or not, and the earlier registrations', async () => {
    const as = await issuers();
    stop.push(() => as.close());
    const store = new MemoryStore();
    await afterTwoSwitches(store, as.base);
    // a grant whose server binding is already gone
    await store.setTokens({
      issuer: `${as.base}/as5`,
      resource: `${as.base}/gone`,
      access_token: 'at5',
      token_type: 'Bearer',
      client_id: 'c5',
    });
    // a registration an earlier switch left behind (its grant already gone)
    await store.setClient({ issuer: `${as.base}/as7`, client_id: 'c7', client_secret: 'secret7', source: 'dcr' });
    await new McpAuthClient({ clientName: 'logout test', store }).logout();
    expect(await store.listTokens()).toEqual([]);
    expect((await store.listClients()).map((c) => c.client_id).sort()).toEqual(['c3', 'c9']);
    expect(await store.listServers()).toEqual([]);
  });

  it('the CLI: `logout <url>` leaves no refresh token or client secret in store.json', async () => {
    const as = await issuers();
    stop.push(() => as.close());
    const home = mkdtempSync(join(tmpdir(), 'mak-leftovers-'));
    stop.push(() => rmSync(home, { recursive: true, force: true }));
    const binding = await afterTwoSwitches(new FileStore(join(home, 'store.json')), as.base);
    const out: string[] = [];
    const code = await run(['logout', binding.server], {
      stdout: (t) => void out.push(t),
      stderr: () => undefined,
      env: { MCP_AUTH_KIT_HOME: home },
    });
    expect(code).toBe(0);
    expect(out.join('')).toContain('Logged out of');
    const file = readFileSync(join(home, 'store.json'), 'utf8');
    for (const n of [1, 2, 3]) expect(file).not.toContain(`rt${n}`);
    for (const n of [1, 2]) expect(file).not.toContain(`secret${n}`);
    expect(as.revoked).toHaveLength(3);
  });

  it('a server that names another AS at discovery: the earlier grant is revoked and deleted', async () => {
    const as = await issuers();
    stop.push(() => as.close());
    const store = new MemoryStore();
    const binding = await afterTwoSwitches(store, as.base);
    const found = await new McpAuthClient({ clientName: 'switch test', store }).discover(binding.server);
    expect(found.issuer).toBe(`${as.base}/as4`);
    // as3 was the bound AS: its grant is revoked (RFC 7009) and gone
    expect(as.revoked).toEqual([{ issuer: '/as3', token: 'rt3' }]);
    expect(await store.getTokens(`${as.base}/as3`, binding.resource)).toBeUndefined();
    // the other server's grant is untouched
    expect(await store.getTokens(`${as.base}/as9`, `${as.base}/other`)).toBeDefined();
  });
});
