import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, lstatSync, mkdirSync, readFileSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERR, FileStore, McpAuthError, type StoredTokens } from '../src/index.js';
import { lockState, ownHolder, parseHolder, pidStartedAt, SILENT_HOLDER_MS, type LockHolder } from '../src/store-lock.js';
import { distrustReason, privateMode } from '../src/store-trust.js';
import { fileStoreClient, startRotatingAs } from './helpers/rotating-as.js';
import { closeAfterEach, scratch } from './helpers/scratch.js';

/**
 * Issue 46 items 4 and 9 (client part): the file store trusts only what its user owns (OAuth 2.1
 * §7.1 / MCP Token Theft: refresh tokens and DPoP keys live there), and its lock knows whether
 * its holder is alive. These tests run as root and create files of another uid with chown.
 */
const OTHER_UID = 12_345;
const { tmp, children } = scratch('mak-trust-');
const rotatingAs = closeAfterEach((delayMs: number) => startRotatingAs(delayMs, { refuseReuse: true }));
const tokens = (resource: string, at: string): StoredTokens => ({
  issuer: 'https://as',
  resource,
  access_token: at,
  token_type: 'Bearer',
  client_id: 'c',
});
async function refusal(p: Promise<unknown>): Promise<McpAuthError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(McpAuthError);
  expect((err as McpAuthError).code).toBe(ERR.STORE_UNSAFE);
  return err as McpAuthError;
}
const asRoot = process.getuid?.() === 0;

describe('distrustReason (pure)', () => {
  const dir = (mode: number, uid = 1000) => ({ uid, mode: 0o040000 | mode, symbolicLink: false });
  it('its own 0700 directory and 0600 file are trusted; 0755 / 0644 too (nobody else can write: made private, see privateMode)', () => {
    expect(distrustReason(dir(0o700), 1000)).toBeUndefined();
    expect(distrustReason(dir(0o755), 1000)).toBeUndefined();
    expect(distrustReason({ uid: 1000, mode: 0o100600, symbolicLink: false }, 1000)).toBeUndefined();
    expect(distrustReason({ uid: 1000, mode: 0o100644, symbolicLink: false }, 1000)).toBeUndefined();
  });
  it('another owner, group or other write permission, and a symbolic link are refused', () => {
    expect(distrustReason(dir(0o700, 0), 1000)).toBe('is owned by uid 0, not by you (uid 1000)');
    expect(distrustReason(dir(0o777), 1000)).toBe('is writable by its group (mode 777)');
    expect(distrustReason(dir(0o702), 1000)).toBe('is writable by other users (mode 702)');
    expect(distrustReason(dir(0o1777), 1000)).toBe('is writable by its group (mode 777)');
    expect(distrustReason({ uid: 1000, mode: 0o120777, symbolicLink: true }, 1000)).toBe('is a symbolic link');
  });
  it('without POSIX owners (Windows) only the symbolic-link rule applies', () => {
    expect(distrustReason(dir(0o777, 0), undefined)).toBeUndefined();
    expect(distrustReason({ uid: 0, mode: 0, symbolicLink: true }, undefined)).toBe('is a symbolic link');
  });
});

describe('privateMode (pure): a store its user owns that others may read is made private (review r46 F6)', () => {
  const at = (mode: number, uid = 1000) => ({ uid, mode, symbolicLink: false });
  it('group or other read (or list/enter) bits are removed from a directory or file its user owns', () => {
    expect(privateMode(at(0o040755), 1000)).toBe(0o700);
    expect(privateMode(at(0o040711), 1000)).toBe(0o700);
    expect(privateMode(at(0o100644), 1000)).toBe(0o600);
    expect(privateMode(at(0o100640), 1000)).toBe(0o600);
    expect(privateMode(at(0o100604), 1000)).toBe(0o600);
  });
  it('a private one is left alone; a refused one (another owner, writable by others, a link) is not repaired', () => {
    expect(privateMode(at(0o040700), 1000)).toBeUndefined();
    expect(privateMode(at(0o100600), 1000)).toBeUndefined();
    expect(privateMode(at(0o100644, 0), 1000)).toBeUndefined();
    expect(privateMode(at(0o100666), 1000)).toBeUndefined();
    expect(privateMode({ uid: 1000, mode: 0o120777, symbolicLink: true }, 1000)).toBeUndefined();
  });
  it('without POSIX modes (Windows) there is nothing to repair', () => {
    expect(privateMode(at(0o100644), undefined)).toBeUndefined();
  });
});

describe('FileStore makes a store readable by others private and says so once (review r46 F6, OAuth 2.1 §7.1)', () => {
  it('a 0644 file in a 0755 directory becomes 0600 in 0700, told once per path', async () => {
    const dir = join(tmp(), 'home');
    const path = join(dir, 'store.json');
    await new FileStore(path).setTokens(tokens('https://rs', 'secret'));
    chmodSync(dir, 0o755);
    chmodSync(path, 0o644);
    const told: string[] = [];
    const store = new FileStore(path, { onRepair: (m) => told.push(m) });
    expect((await store.getTokens('https://as', 'https://rs'))!.access_token).toBe('secret');
    expect(lstatSync(dir).mode & 0o777).toBe(0o700);
    expect(lstatSync(path).mode & 0o777).toBe(0o600);
    expect(told).toEqual([
      `mcp-auth-kit: the token store directory ${dir} was readable by its group (mode 755); changed it to 700`,
      `mcp-auth-kit: the token store file ${path} was readable by its group (mode 644); changed it to 600`,
    ]);
    // opened up again in the same process: repaired again, not told again
    chmodSync(path, 0o604);
    await store.listServers();
    expect(lstatSync(path).mode & 0o777).toBe(0o600);
    expect(told).toHaveLength(2);
  });
});

describe('lockState (pure): a lock is taken over when its holder is gone, never for its age alone', () => {
  const self: LockHolder = { pid: 100, host: 'here', boot: 'boot-1', started: 1 };
  const holder = (extra: Partial<LockHolder> = {}): LockHolder => ({ pid: 200, host: 'here', boot: 'boot-1', started: 2, ...extra });
  const alive = { alive: () => true, startedAt: () => undefined };
  const dead = { alive: () => false, startedAt: () => undefined };
  const startedAt = (ms: number) => ({ alive: () => true, startedAt: () => ms });
  it('a live holder on this machine keeps its lock past the old 30 s threshold', () => {
    expect(lockState(holder(), 60_000, self, alive)).toBe('held');
    expect(lockState(holder(), 5 * 60_000, self, alive)).toBe('held');
  });
  it('a holder whose pid is gone, or from another boot, has abandoned it at once', () => {
    expect(lockState(holder(), 0, self, dead)).toBe('abandoned');
    expect(lockState(holder({ boot: 'boot-0' }), 0, self, alive)).toBe('abandoned');
  });
  it('a pid that lives as another process than the one that wrote the lock (pid reuse) has abandoned it', () => {
    expect(lockState(holder({ started: 1_000_000 }), 0, self, startedAt(1_000_000 + 60_000))).toBe('abandoned');
    expect(lockState(holder({ started: 1_000_000 }), 0, self, startedAt(1_000_000 + 800))).toBe('held');
  });
  it('a pid that lives but has not beaten for 10× the silence limit is not the holder (pid reuse, hang)', () => {
    expect(lockState(holder(), 10 * SILENT_HOLDER_MS + 1, self, alive)).toBe('abandoned');
  });
  it('a holder on another host, or a lock of the old format, is judged by its heartbeat', () => {
    expect(lockState(holder({ host: 'elsewhere' }), 1_000, self, dead)).toBe('held');
    expect(lockState(holder({ host: 'elsewhere' }), SILENT_HOLDER_MS + 1, self, alive)).toBe('abandoned');
    expect(lockState(undefined, 1_000, self, dead)).toBe('held');
    expect(lockState(undefined, SILENT_HOLDER_MS + 1, self, alive)).toBe('abandoned');
  });
  it('the lock file names pid, host, boot id and start time', () => {
    const own = ownHolder();
    expect(own.pid).toBe(process.pid);
    expect(own.host).toBe(hostname());
    expect(own.started).toBeLessThanOrEqual(Date.now());
    expect(parseHolder(JSON.stringify(own))).toEqual(own);
    expect(parseHolder('12345')).toBeUndefined();
    if (process.platform === 'linux') expect(Math.abs(pidStartedAt(process.pid)! - own.started)).toBeLessThan(5_000);
    expect(parseHolder('{"pid":-1,"host":"h","started":1}')).toBeUndefined();
  });
});

describe.skipIf(!asRoot)('FileStore trusts only what its user owns (issue 46 item 9)', () => {
  it("another user's world-writable directory with a planted store is refused, naming the path and the fix", async () => {
    const dir = join(tmp(), 'home');
    mkdirSync(dir);
    writeFileSync(join(dir, 'store.json'), JSON.stringify({ version: 1, clients: {}, tokens: {}, servers: {} }));
    chownSync(join(dir, 'store.json'), OTHER_UID, OTHER_UID);
    chownSync(dir, OTHER_UID, OTHER_UID);
    chmodSync(dir, 0o777);
    const err = await refusal(new FileStore(join(dir, 'store.json')).listServers());
    expect(err.message).toBe(
      `the token store directory ${dir} is owned by uid ${OTHER_UID}, not by you (uid 0); refusing to use it: use a directory of your own (--home or $MCP_AUTH_KIT_HOME) or make it yours: chown, then chmod 700`,
    );
    await refusal(new FileStore(join(dir, 'store.json')).setTokens(tokens('https://rs', 'x')));
  });

  it('its own directory open to the group is refused', async () => {
    const dir = join(tmp(), 'home');
    mkdirSync(dir);
    chmodSync(dir, 0o770);
    const err = await refusal(new FileStore(join(dir, 'store.json')).listServers());
    expect(err.message).toContain('is writable by its group (mode 770)');
  });

  it('a store file owned by another user, or writable by others, is refused', async () => {
    const dir = tmp();
    const path = join(dir, 'store.json');
    await new FileStore(path).setTokens(tokens('https://rs', 'mine'));
    chownSync(path, OTHER_UID, OTHER_UID);
    expect((await refusal(new FileStore(path).listServers())).message).toMatch(/token store file .* is owned by uid 12345/);
    chownSync(path, 0, 0);
    chmodSync(path, 0o666);
    expect((await refusal(new FileStore(path).listServers())).message).toMatch(/is writable by its group \(mode 666\)/);
  });

  it('a store symlinked to another file is refused without reading it, and that file is never printed or changed', async () => {
    const dir = tmp();
    const secret = join(dir, 'someone-elses.txt');
    writeFileSync(secret, 'TOP-SECRET-FIRST-BYTES of a file that is not a store');
    const path = join(dir, 'store.json');
    symlinkSync(secret, path);
    const err = await refusal(new FileStore(path).listServers());
    expect(err.message).toMatch(/token store file .*store\.json is a symbolic link/);
    expect(err.message).not.toContain('TOP-SECRET');
    await refusal(new FileStore(path).setTokens(tokens('https://rs', 'x')));
    expect(readFileSync(secret, 'utf8')).toBe('TOP-SECRET-FIRST-BYTES of a file that is not a store');
  });

  it('a store file that is not JSON is reported without its content', async () => {
    const path = join(tmp(), 'store.json');
    writeFileSync(path, 'SECRET-TEXT that is not JSON', { mode: 0o600 });
    const err = await refusal(new FileStore(path).listServers());
    expect(err.message).not.toContain('SECRET');
    expect(err.message).toContain(path);
  });

  it('a dangling lock symlink is an error at once, not a 30 s wait; it is neither followed nor removed', async () => {
    const path = join(tmp(), 'store.json');
    symlinkSync(join(tmp(), 'nowhere', 'x'), `${path}.lock`);
    const started = Date.now();
    const err = await refusal(new FileStore(path).setTokens(tokens('https://rs', 'x')));
    expect(Date.now() - started).toBeLessThan(2000);
    expect(err.message).toMatch(/token store lock .*store\.json\.lock is a symbolic link; refusing to use it: remove it/);
    expect(lstatSync(`${path}.lock`).isSymbolicLink()).toBe(true);
  });
});

describe('the store lock knows whether its holder is alive (issue 46 item 4)', () => {
  function holdLockAs(pid: number, path: string, ageMs: number, started: number) {
    const own = ownHolder();
    writeFileSync(`${path}.lock`, JSON.stringify({ ...own, pid, started }), { mode: 0o600 });
    const then = new Date(Date.now() - ageMs);
    utimesSync(`${path}.lock`, then, then);
  }

  it('a live holder (another process) keeps its lock after its age passed the old 30 s threshold', async () => {
    const path = join(tmp(), 'store.json');
    const spawned = Date.now();
    const holder = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
    children.push(holder);
    holdLockAs(holder.pid!, path, 45_000, spawned);
    const err = (await new FileStore(path, { lockWaitMs: 400 })
      .setTokens(tokens('https://rs', 'x'))
      .catch((e: unknown) => e)) as McpAuthError;
    expect(err).toBeInstanceOf(McpAuthError);
    expect(err.code).toBe(ERR.STORE_BUSY);
    expect(err.message).toMatch(new RegExp(`waiting for the token store lock .* held by process ${holder.pid} on `));
    expect(existsSync(`${path}.lock`)).toBe(true);
    // once it is gone, the lock is taken at once
    holder.kill('SIGKILL');
    await new Promise((r) => holder.once('exit', r));
    await new FileStore(path, { lockWaitMs: 400 }).setTokens(tokens('https://rs', 'after'));
    expect((await new FileStore(path).getTokens('https://as', 'https://rs'))!.access_token).toBe('after');
  });

  it("a fresh lock whose holder's pid is gone is taken over at once (no 30 s wait)", async () => {
    const path = join(tmp(), 'store.json');
    const gone = spawnSync(process.execPath, ['-e', '']).pid!;
    holdLockAs(gone, path, 0, Date.now());
    const started = Date.now();
    await new FileStore(path, { lockWaitMs: 10_000 }).setTokens(tokens('https://rs', 'taken'));
    expect(Date.now() - started).toBeLessThan(2000);
    expect(existsSync(`${path}.lock`)).toBe(false);
  });

  it.skipIf(process.platform !== 'linux')(
    'a fresh lock naming a live pid that started later than its holder did (pid reused) is taken over at once',
    async () => {
      const path = join(tmp(), 'store.json');
      const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
      children.push(other);
      holdLockAs(other.pid!, path, 0, Date.now() - 3_600_000);
      const started = Date.now();
      await new FileStore(path, { lockWaitMs: 10_000 }).setTokens(tokens('https://rs', 'taken'));
      expect(Date.now() - started).toBeLessThan(2000);
    },
  );

  it('while held, the lock file names its holder and its heartbeat keeps it fresh', async () => {
    const path = join(tmp(), 'store.json');
    const store = new FileStore(path);
    await store.withLock(async () => {
      const holder = parseHolder(readFileSync(`${path}.lock`, 'utf8'));
      expect(holder).toMatchObject({ pid: process.pid, host: hostname() });
      const old = new Date(Date.now() - 60_000);
      utimesSync(`${path}.lock`, old, old);
      await new Promise((r) => setTimeout(r, 3_000));
      expect(Date.now() - lstatSync(`${path}.lock`).mtimeMs).toBeLessThan(5_000);
    });
    expect(existsSync(`${path}.lock`)).toBe(false);
  });
});

describe('refresh under the lock: once across processes, and nothing else waits for it (issue 46 item 4)', () => {
  // every stored token counts as expired: each getTokens refreshes
  const client = (base: string, path: string) => fileStoreClient(base, path, { expirySkewSeconds: 7200 });

  it('two clients on one store file (two processes) refreshing at once redeem the refresh token once', async () => {
    const as = await rotatingAs(300);
    const path = join(tmp(), 'store.json');
    await client(as.base, path).authorize(`${as.base}/mcp`);
    const [a, b] = await Promise.all([
      client(as.base, path).getTokens(`${as.base}/mcp`),
      client(as.base, path).getTokens(`${as.base}/mcp`),
    ]);
    expect(as.redeemed).toEqual(['rt-1']);
    expect(a!.access_token).toBe('at-2');
    expect(b!.access_token).toBe('at-2');
  });

  it('two real processes refreshing at once redeem the refresh token once (needs npm run build)', async () => {
    const as = await rotatingAs(1_500);
    const dir = tmp();
    const path = join(dir, 'store.json');
    await client(as.base, path).authorize(`${as.base}/mcp`);
    const script = join(dir, 'refresh.mjs');
    const dist = new URL('../dist/index.js', import.meta.url).href;
    writeFileSync(
      script,
      `import { FileStore, McpAuthClient } from ${JSON.stringify(dist)};
const [path, base] = process.argv.slice(2);
const c = new McpAuthClient({ clientName: 'p', store: new FileStore(path), expirySkewSeconds: 7200,
  clientCredentials: { client_id: 'm2m', client_secret: 's', issuer: base } });
const t = await c.getTokens(base + '/mcp');
process.stdout.write(t ? t.access_token : 'none');
`,
    );
    const refresh = () =>
      new Promise<string>((resolve, reject) => {
        const child = spawn(process.execPath, [script, path, as.base], { stdio: ['ignore', 'pipe', 'inherit'] });
        children.push(child);
        let out = '';
        child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
        child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`exit ${code}`))));
      });
    const got = await Promise.all([refresh(), refresh()]);
    // Overlapping (the usual case), both use the one refresh: ['at-2', 'at-2']. A loaded machine may
    // start the second process after the first is done; it then refreshes the rotated token. Either
    // way no refresh token is redeemed twice and neither process is refused (invalid_grant → 'none').
    expect(as.redeemed[0]).toBe('rt-1');
    expect(new Set(as.redeemed).size).toBe(as.redeemed.length);
    expect(got.every((t) => /^at-\d+$/.test(t))).toBe(true);
  });

  it('a slow refresh holds up no store write of another server (a login elsewhere goes on)', async () => {
    const as = await rotatingAs(3_000);
    const path = join(tmp(), 'store.json');
    await client(as.base, path).authorize(`${as.base}/mcp`);
    const refreshing = client(as.base, path).getTokens(`${as.base}/mcp`);
    await new Promise((r) => setTimeout(r, 200));
    const started = Date.now();
    await new FileStore(path).setTokens(tokens('https://elsewhere/mcp', 'unrelated'));
    // well before the refresh ends (about 2.8 s from here), which is when a shared lock would let it in
    expect(Date.now() - started).toBeLessThan(1_500);
    expect((await refreshing)!.access_token).toBe('at-2');
  });
});
