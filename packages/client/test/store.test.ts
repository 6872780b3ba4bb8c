import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  defaultStoreDir,
  FileStore,
  MemoryStore,
  type AuthStore,
  type ServerBinding,
  type StoredDpopKey,
  type StoredTokens,
} from '../src/index.js';
import { startLoopbackListener } from '../src/core.js';

const dirs: string[] = [];
afterEach(() => {
  while (dirs.length) rmSync(dirs.pop()!, { recursive: true, force: true });
});
function tmp() {
  const d = mkdtempSync(join(tmpdir(), 'mak-store-'));
  dirs.push(d);
  return d;
}
const tokens = (issuer: string, resource: string, at: string): StoredTokens => ({
  issuer,
  resource,
  access_token: at,
  token_type: 'bearer',
  client_id: 'c',
  refresh_token: `rt-${at}`,
});

for (const [name, make] of [
  ['MemoryStore', () => new MemoryStore()],
  ['FileStore', () => new FileStore(join(tmp(), 'sub', 'store.json'))],
] as Array<[string, () => AuthStore]>) {
  describe(name, () => {
    it('MCP Authorization Server Discovery: tokens are keyed by (issuer, resource)', async () => {
      const s = make();
      await s.setTokens(tokens('https://as1', 'https://rs/mcp', 'a'));
      await s.setTokens(tokens('https://as2', 'https://rs/mcp', 'b'));
      await s.setTokens(tokens('https://as1', 'https://rs2/mcp', 'c'));
      expect((await s.getTokens('https://as1', 'https://rs/mcp'))!.access_token).toBe('a');
      expect((await s.getTokens('https://as2', 'https://rs/mcp'))!.access_token).toBe('b');
      expect((await s.getTokens('https://as1', 'https://rs2/mcp'))!.access_token).toBe('c');
      expect(await s.getTokens('https://as3', 'https://rs/mcp')).toBeUndefined();
      await s.deleteTokens('https://as1', 'https://rs/mcp');
      expect(await s.getTokens('https://as1', 'https://rs/mcp')).toBeUndefined();
      expect((await s.getTokens('https://as2', 'https://rs/mcp'))!.access_token).toBe('b');
    });

    it('MCP Authorization Server Binding: client credentials are keyed by issuer', async () => {
      const s = make();
      await s.setClient({ issuer: 'https://as1', client_id: 'one', source: 'dcr' });
      await s.setClient({ issuer: 'https://as2', client_id: 'two', source: 'dcr' });
      expect((await s.getClient('https://as1'))!.client_id).toBe('one');
      expect((await s.getClient('https://as2'))!.client_id).toBe('two');
      await s.deleteClient('https://as1');
      expect(await s.getClient('https://as1')).toBeUndefined();
    });

    it('concurrent writes are all kept (read-modify-write is serialized)', async () => {
      const s = make();
      await Promise.all(Array.from({ length: 20 }, (_, i) => s.setTokens(tokens('https://as', `https://rs/${i}`, `t${i}`))));
      for (let i = 0; i < 20; i++) expect((await s.getTokens('https://as', `https://rs/${i}`))!.access_token).toBe(`t${i}`);
    });

    it('returned objects are copies: mutating them does not change the store', async () => {
      const s = make();
      await s.setTokens(tokens('https://as', 'https://rs', 'orig'));
      const t = (await s.getTokens('https://as', 'https://rs'))!;
      t.access_token = 'mutated';
      expect((await s.getTokens('https://as', 'https://rs'))!.access_token).toBe('orig');
    });

    it('stored objects are copies: changing what was given to a setter, nested members too, does not change the store', async () => {
      const s = make();
      const given = tokens('https://as', 'https://rs', 'orig');
      await s.setTokens(given);
      given.access_token = 'changed';
      const client = { issuer: 'https://as', client_id: 'one', source: 'dcr' as const, redirect_uris: ['http://127.0.0.1:1/cb'] };
      await s.setClient(client);
      client.redirect_uris.push('http://127.0.0.1:2/cb');
      const binding = {
        server: 'https://rs/mcp',
        resource: 'https://rs/mcp',
        issuer: 'https://as',
        as_metadata: { issuer: 'https://as', scopes_supported: ['a'] },
      } as unknown as ServerBinding;
      await s.setServer(binding);
      (binding.as_metadata.scopes_supported as string[]).push('b');
      const key: StoredDpopKey = {
        issuer: 'https://as',
        resource: 'https://rs/mcp',
        alg: 'ES256',
        private_jwk: { kty: 'EC', d: 'one' },
        jkt: 'k',
      };
      await s.setDpopKey!(key);
      key.private_jwk.d = 'two';
      // a later write of another entry keeps the earlier entries as they were stored
      await s.setTokens(tokens('https://as', 'https://rs2', 'other'));

      expect((await s.getTokens('https://as', 'https://rs'))!.access_token).toBe('orig');
      expect((await s.getClient('https://as'))!.redirect_uris).toEqual(['http://127.0.0.1:1/cb']);
      expect((await s.getServer('https://rs/mcp'))!.as_metadata.scopes_supported).toEqual(['a']);
      expect((await s.getDpopKey!('https://as', 'https://rs/mcp'))!.private_jwk.d).toBe('one');
      expect((await s.listServers()).map((b) => b.server)).toEqual(['https://rs/mcp']);
    });

    it('a deletion or replacement leaves the other entries as they were', async () => {
      const s = make();
      await s.setTokens(tokens('https://as', 'https://rs/a', 'a'));
      await s.setTokens(tokens('https://as', 'https://rs/b', 'b'));
      await s.setTokens(tokens('https://as', 'https://rs/a', 'a2'));
      await s.deleteTokens('https://as', 'https://rs/b');
      const key: StoredDpopKey = { issuer: 'https://as', resource: 'https://rs/a', alg: 'ES256', private_jwk: { kty: 'EC' }, jkt: 'k1' };
      await s.setDpopKey!(key);
      await s.setDpopKey!({ ...key, resource: 'https://rs/b', jkt: 'k2' });
      await s.deleteDpopKey!('https://as', 'https://rs/a');
      expect((await s.getTokens('https://as', 'https://rs/a'))!.access_token).toBe('a2');
      expect(await s.getTokens('https://as', 'https://rs/b')).toBeUndefined();
      expect(await s.getDpopKey!('https://as', 'https://rs/a')).toBeUndefined();
      expect((await s.getDpopKey!('https://as', 'https://rs/b'))!.jkt).toBe('k2');
    });
  });
}

describe('MemoryStore specifics', () => {
  it('an entry that is not plain data reads back as structuredClone gives it (dates, shared members)', async () => {
    const s = new MemoryStore();
    const shared = { tag: 'same' };
    await s.setClient({ issuer: 'https://as', client_id: 'c', source: 'dcr', registered: new Date(5), a: shared, b: shared });
    const read = (await s.getClient('https://as'))!;
    expect(read.registered).toBeInstanceOf(Date);
    expect((read.registered as Date).getTime()).toBe(5);
    expect(read.a).toBe(read.b);
    (read.a as { tag: string }).tag = 'changed';
    expect(((await s.getClient('https://as'))!.a as { tag: string }).tag).toBe('same');
  });

  it('a value that cannot be copied is refused and leaves the store as it was', async () => {
    const s = new MemoryStore();
    await s.setTokens(tokens('https://as', 'https://rs', 'kept'));
    const notData = { issuer: 'https://as', client_id: 'c', source: 'dcr' as const, hook: () => undefined };
    await expect(s.setClient(notData)).rejects.toThrow(/could not be cloned/);
    expect(await s.getClient('https://as')).toBeUndefined();
    expect((await s.getTokens('https://as', 'https://rs'))!.access_token).toBe('kept');
    // the store still takes writes after the refusal
    await s.setClient({ issuer: 'https://as', client_id: 'c', source: 'dcr' });
    expect((await s.getClient('https://as'))!.client_id).toBe('c');
  });
});

describe('FileStore specifics (OAuth 2.1 §7.1 secure token storage)', () => {
  it('the file is 0600 in a 0700 directory and survives a new instance', async () => {
    const dir = join(tmp(), 'home');
    const path = join(dir, 'store.json');
    await new FileStore(path).setTokens(tokens('https://as', 'https://rs', 'persisted'));
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect((await new FileStore(path).getTokens('https://as', 'https://rs'))!.access_token).toBe('persisted');
  });

  it('atomic replace: no temporary files are left behind and the previous content is never half-written', async () => {
    const dir = tmp();
    const path = join(dir, 'store.json');
    const s = new FileStore(path);
    for (let i = 0; i < 5; i++) await s.setTokens(tokens('https://as', 'https://rs', `v${i}`));
    expect(readdirSync(dir)).toEqual(['store.json']);
    expect(JSON.parse(readFileSync(path, 'utf8')).version).toBe(1);
  });

  it("two instances on one file (two processes) never lose each other's writes (lock file)", async () => {
    const path = join(tmp(), 'store.json');
    const a = new FileStore(path);
    const b = new FileStore(path);
    await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).setTokens(tokens('https://as', `https://rs/${i}`, `t${i}`))));
    for (let i = 0; i < 10; i++) expect((await a.getTokens('https://as', `https://rs/${i}`))!.access_token).toBe(`t${i}`);
    expect(readdirSync(dirname(path))).toEqual(['store.json']);
  });

  it('a stale lock file left by a crashed process is taken over', async () => {
    const path = join(tmp(), 'store.json');
    writeFileSync(`${path}.lock`, '999999');
    const old = new Date(Date.now() - 60_000);
    utimesSync(`${path}.lock`, old, old);
    await new FileStore(path).setTokens(tokens('https://as', 'https://rs', 'after-crash'));
    expect((await new FileStore(path).getTokens('https://as', 'https://rs'))!.access_token).toBe('after-crash');
  });

  it('withLock is re-entrant for store calls made inside it', async () => {
    const s = new FileStore(join(tmp(), 'store.json'));
    const out = await s.withLock(async () => {
      await s.setTokens(tokens('https://as', 'https://rs', 'nested'));
      return (await s.getTokens('https://as', 'https://rs'))!.access_token;
    });
    expect(out).toBe('nested');
  });

  it('a corrupt or foreign file is reported, not silently overwritten', async () => {
    const path = join(tmp(), 'store.json');
    writeFileSync(path, JSON.stringify({ version: 99 }));
    await expect(new FileStore(path).getTokens('a', 'b')).rejects.toThrow(/unsupported store file format/);
  });

  it('default location: $MCP_AUTH_KIT_HOME, else $XDG_CONFIG_HOME/mcp-auth-kit, else ~/.config/mcp-auth-kit', () => {
    expect(defaultStoreDir({ MCP_AUTH_KIT_HOME: '/x/home' })).toBe('/x/home');
    expect(defaultStoreDir({ XDG_CONFIG_HOME: '/xdg' })).toBe('/xdg/mcp-auth-kit');
    expect(defaultStoreDir({})).toMatch(/\.config\/mcp-auth-kit$/);
  });
});

describe('loopback redirect listener (RFC 8252 §7.3)', () => {
  it('binds 127.0.0.1 on an ephemeral port and resolves with the first callback on /callback carrying the state', async () => {
    const l = await startLoopbackListener();
    try {
      expect(l.redirectUri).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
      const waiting = l.waitForCallback({ state: 's', timeoutMs: 5000 });
      expect((await fetch(new URL('/other', l.redirectUri))).status).toBe(404);
      const page = await fetch(`${l.redirectUri}?code=c&state=s`);
      expect(page.status).toBe(200);
      expect(page.headers.get('cache-control')).toBe('no-store');
      expect(await page.text()).not.toContain('code=c');
      const url = await waiting;
      expect(url.searchParams.get('code')).toBe('c');
      // Only one response is accepted.
      expect((await fetch(`${l.redirectUri}?code=second&state=s`)).status).toBe(404);
    } finally {
      await l.close();
    }
  });

  it('RFC 6749 §10.12: requests without exactly the expected state get a 400 page and the wait goes on', async () => {
    const l = await startLoopbackListener();
    try {
      // before anyone waits, no state can be checked: refused
      expect((await fetch(`${l.redirectUri}?code=early&state=s`)).status).toBe(400);
      const waiting = l.waitForCallback({ state: 's', timeoutMs: 5000 });
      for (const query of ['code=x&state=t', 'code=x', 'code=x&state=', 'code=x&state=s&state=s', 'error=access_denied&state=S']) {
        const res = await fetch(`${l.redirectUri}?${query}`);
        expect(res.status, query).toBe(400);
        // Nothing but the page's own hashed stylesheet (callback-page.ts): no script, no inline style.
        expect(res.headers.get('content-security-policy')).toMatch(
          /^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/]+=*'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'$/,
        );
        expect(await res.text()).not.toContain('code=x');
      }
      expect((await fetch(`${l.redirectUri}?code=real&state=s`)).status).toBe(200);
      expect((await waiting).searchParams.get('code')).toBe('real');
    } finally {
      await l.close();
    }
  });

  it('waitForCallback times out when only forged callbacks arrive', async () => {
    const l = await startLoopbackListener();
    try {
      const waiting = l.waitForCallback({ state: 's', timeoutMs: 300 });
      expect((await fetch(`${l.redirectUri}?code=x&state=forged`)).status).toBe(400);
      await expect(waiting).rejects.toMatchObject({ code: 'MCP_AUTH_AUTHORIZATION_TIMEOUT' });
    } finally {
      await l.close();
    }
  });

  it('waitForCallback needs a state', async () => {
    const l = await startLoopbackListener();
    await expect(l.waitForCallback({ state: '' })).rejects.toMatchObject({ code: 'MCP_AUTH_INVALID_ARGUMENT' });
    await l.close();
  });

  it('waitForCallback can be aborted', async () => {
    const l = await startLoopbackListener();
    const ac = new AbortController();
    const p = l.waitForCallback({ state: 's', signal: ac.signal });
    ac.abort();
    await expect(p).rejects.toMatchObject({ code: 'MCP_AUTH_AUTHORIZATION_TIMEOUT' });
    await l.close();
  });
});
