import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { ERR, FileStore, McpAuthClient, McpAuthError } from '../src/index.js';
import { MemoryStore, type AuthStore, type ServerBinding } from '../src/store.js';
import { STORED_VALUE_LIMITS, type StoredRecordKind } from '../src/stored-values.js';
import { oauthServer, startHostileServer, type HostileServer } from './helpers/hostile-server.js';

/**
 * Review r46 F2: every value the client stores from a server is bounded (a 900 KB PRM became a
 * 3.6 MB store; 300 KB token values and secrets grew it by 1.2 MB per command). The caps live in
 * src/stored-values.ts; this file enumerates every store setter and the cap it applies.
 */
const SRC = fileURLToPath(new URL('../src/', import.meta.url));
const big = 'x'.repeat(300_000);
const base = 'http://127.0.0.1:1';
const binding = (extra: Partial<ServerBinding> = {}): ServerBinding => ({
  server: `${base}/mcp`,
  resource: `${base}/mcp`,
  issuer: base,
  as_metadata: { issuer: base, authorization_endpoint: `${base}/a`, token_endpoint: `${base}/t` },
  ...extra,
});

/** Every setter of the store interface: the record kind its cap is, a record within it, and ones over it. */
const SETTERS: Array<{
  setter: 'setClient' | 'setTokens' | 'setServer' | 'setDpopKey';
  kind: StoredRecordKind;
  ok: () => object;
  over: Array<{ why: RegExp; record: () => object }>;
  stored: (s: AuthStore) => Promise<unknown>;
}> = [
  {
    setter: 'setClient',
    kind: 'client',
    ok: () => ({ issuer: base, client_id: 'c', client_secret: 's', source: 'dcr' }),
    over: [{ why: /"client_secret" is 300000 bytes/, record: () => ({ issuer: base, client_id: 'c', client_secret: big, source: 'dcr' }) }],
    stored: (s) => s.getClient(base),
  },
  {
    setter: 'setTokens',
    kind: 'tokens',
    ok: () => ({ issuer: base, resource: `${base}/mcp`, access_token: 'at', token_type: 'Bearer', client_id: 'c' }),
    over: [
      {
        why: /"refresh_token" is 300000 bytes/,
        record: () => ({
          issuer: base,
          resource: `${base}/mcp`,
          access_token: 'at',
          refresh_token: big,
          token_type: 'Bearer',
          client_id: 'c',
        }),
      },
      // many values each under the string bound, together over the record bound
      {
        why: /bytes, more than 65536\)/,
        record: () => ({
          issuer: base,
          resource: `${base}/mcp`,
          access_token: 'a'.repeat(16_000),
          refresh_token: 'r'.repeat(16_000),
          scope: 's'.repeat(16_000),
          requested_scope: 'q'.repeat(16_000),
          id_token: 'i'.repeat(16_000),
          token_type: 'Bearer',
          client_id: 'c',
        }),
      },
    ],
    stored: (s) => s.getTokens(base, `${base}/mcp`),
  },
  {
    setter: 'setServer',
    kind: 'server',
    ok: () => binding({ scopes_supported: ['mcp'] }),
    over: [
      {
        why: /"scopes_supported" has 300000 entries/,
        record: () => binding({ scopes_supported: Array.from({ length: 300_000 }, () => '') }),
      },
      { why: /"scopes_supported" is 300000 bytes/, record: () => binding({ scopes_supported: [big] }) },
    ],
    stored: (s) => s.getServer(`${base}/mcp`),
  },
  {
    setter: 'setDpopKey',
    kind: 'dpopKey',
    ok: () => ({ issuer: base, resource: `${base}/mcp`, alg: 'ES256', private_jwk: { kty: 'EC' }, jkt: 'j' }),
    over: [
      {
        why: /"private_jwk\.d" is 300000 bytes/,
        record: () => ({ issuer: base, resource: `${base}/mcp`, alg: 'ES256', private_jwk: { kty: 'EC', d: big }, jkt: 'j' }),
      },
    ],
    stored: (s) => s.getDpopKey!(base, `${base}/mcp`),
  },
];

const dirs: string[] = [];
const servers: HostileServer[] = [];
afterEach(async () => {
  while (dirs.length) rmSync(dirs.pop()!, { recursive: true, force: true });
  while (servers.length) await servers.pop()!.close();
});
function stores(): Array<[string, AuthStore, () => string]> {
  const dir = mkdtempSync(join(tmpdir(), 'mak-stored-'));
  dirs.push(dir);
  const file = join(dir, 'store.json');
  return [
    ['MemoryStore', new MemoryStore(), () => ''],
    ['FileStore', new FileStore(file), () => (existsSync(file) ? readFileSync(file, 'utf8') : '')],
  ];
}

describe('stored values are bounded (review r46 F2)', () => {
  it('the setters of the store interface are exactly the enumerated ones, and each applies its cap in store.ts', () => {
    const store = readFileSync(join(SRC, 'store.ts'), 'utf8');
    const iface = /export interface AuthStore \{([\s\S]*?)\n\}/.exec(store)![1]!;
    const declared = [...iface.matchAll(/^\s+(set\w+)\??\(/gm)].map((m) => m[1]).sort();
    expect(declared).toEqual(SETTERS.map((s) => s.setter).sort());
    for (const { setter, kind } of SETTERS) {
      expect(store).toMatch(new RegExp(`async ${setter}\\([^)]*\\) \\{\\n\\s+assertStorable\\('${kind}', `));
    }
    // the file store writes through the DataStore setters: it defines none of its own
    expect(readFileSync(join(SRC, 'file-store.ts'), 'utf8')).not.toMatch(/^\s+(?:async\s+)?set\w+\(/m);
    expect(Object.keys(STORED_VALUE_LIMITS.maxRecordBytes).sort()).toEqual(SETTERS.map((s) => s.kind).sort());
  });

  for (const { setter, kind, ok, over, stored } of SETTERS) {
    it(`${setter} (${kind}): a record within the caps is kept; one over a cap is refused and nothing is stored`, async () => {
      for (const [name, store, file] of stores()) {
        for (const { why, record } of over) {
          const err = await (store[setter] as (r: object) => Promise<void>).call(store, record()).catch((e: unknown) => e);
          expect(err, `${name} ${setter}`).toBeInstanceOf(McpAuthError);
          expect((err as McpAuthError).code).toBe(ERR.RESPONSE_TOO_LARGE);
          expect((err as McpAuthError).message).toMatch(why);
          expect((err as McpAuthError).message).toMatch(/refused, nothing stored/);
          expect(await stored(store)).toBeUndefined();
          expect(file().length).toBeLessThan(10_000);
        }
        await (store[setter] as (r: object) => Promise<void>).call(store, ok());
        expect(await stored(store)).toBeDefined();
      }
    });
  }

  it('end to end: a PRM with 300 000 scopes is refused at discovery; the store keeps no binding', async () => {
    const s = await startHostileServer((path, b) => {
      if (path === '/.well-known/oauth-protected-resource/mcp') {
        return { json: { resource: `${b}/mcp`, authorization_servers: [b], scopes_supported: Array.from({ length: 300_000 }, () => '') } };
      }
      return oauthServer({ json: {} })(path, b);
    });
    servers.push(s);
    const store = new MemoryStore();
    const client = new McpAuthClient({ clientName: 'values', store, requestTimeoutMs: 5000 });
    const err = await client.authorize(`${s.base}/mcp`).catch((e: unknown) => e);
    expect((err as McpAuthError).code).toBe(ERR.RESPONSE_TOO_LARGE);
    expect((err as McpAuthError).message).toMatch(/server binding \(protected resource metadata\).*"scopes_supported" has 300000 entries/);
    expect(await store.listServers()).toEqual([]);
  });
});
