import { describe, expect, it } from 'vitest';
import { McpAuthClient } from '../src/index.js';
import { MemoryStore } from '../src/store.js';
import { closeAfterEach } from './helpers/scratch.js';
import { afterTwoSwitches, issuers } from './helpers/switched-issuers.js';

/**
 * Review r46 F2: an MCP server that names another authorization server (MCP Authorization Server
 * Discovery: the PRM's `authorization_servers` may change) leaves the tokens and the client
 * registration of the earlier AS in the store. `logout <url>` must revoke (RFC 7009, best effort)
 * and delete every token kept for that server's resource, whatever issuer it is stored under, and
 * `logout` everything; a registration nothing refers to any more goes too.
 */
const startIssuers = closeAfterEach(issuers);

describe('logout after the MCP server switched authorization server (review r46 F2)', () => {
  it('logout <url> revokes and deletes the grants of every issuer the server named, and their registrations', async () => {
    const as = await startIssuers();
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
    const as = await startIssuers();
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

  it('a server that names another AS at discovery: the earlier grant is revoked and deleted', async () => {
    const as = await startIssuers();
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
