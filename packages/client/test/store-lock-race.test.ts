import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GUARD_STALE_MS, ownHolder, takeLock } from '../src/store-lock.js';
import { fileStoreClient, startRotatingAs } from './helpers/rotating-as.js';
import { closeAfterEach, scratch } from './helpers/scratch.js';

/**
 * Review r46 F3 (issue 46, OAuth 2.1 §4.3.1 / RFC 9700 §4.14.2: a rotated refresh token is redeemed
 * once): several processes that find the same abandoned lock at once must not both get in. Before
 * the fix each one unlinked "the stale lock" and created its own, so a late unlink removed the lock
 * another process had just taken. These tests need `npm run build` (the children import dist).
 */
const dist = new URL('../dist/index.js', import.meta.url).href;
const { tmp, children } = scratch('mak-lockrace-');
const rotatingAs = closeAfterEach((delayMs: number) => startRotatingAs(delayMs));
let gone: number | undefined;
const deadPid = () => (gone ??= spawnSync(process.execPath, ['-e', '']).pid!);
const lockFile = (path: string, key?: string) =>
  `${path}${key === undefined ? '' : `.${createHash('sha256').update(key).digest('hex').slice(0, 16)}`}.lock`;
/** A lock left by a process that died: its pid is gone. */
function plantAbandoned(lock: string) {
  writeFileSync(lock, JSON.stringify({ ...ownHolder(), pid: deadPid(), started: 1 }), { mode: 0o600 });
}
function run(args: string[]): Promise<number | null> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'inherit'] });
    children.push(child);
    child.on('exit', resolve);
  });
}

describe('the store lock is exclusive when several processes find one abandoned lock (r46 F3)', () => {
  it('takers interleaved on one event loop (as processes may be): one holder at a time, 50 rounds', async () => {
    const dir = tmp();
    const overlapping: number[] = [];
    for (let round = 0; round < 50; round++) {
      const lock = join(dir, `store-${round}.json.lock`);
      plantAbandoned(lock);
      let inside = 0;
      let most = 0;
      await Promise.all(
        Array.from({ length: 4 }, async () => {
          const release = await takeLock(lock, 10_000);
          most = Math.max(most, ++inside);
          await new Promise((r) => setTimeout(r, 5));
          inside--;
          await release();
        }),
      );
      if (most > 1) overlapping.push(round);
      expect(existsSync(lock)).toBe(false);
    }
    expect(overlapping).toEqual([]);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('a takeover guard left by a process that died while holding it is removed once stale; a fresh one is waited for', async () => {
    const dir = tmp();
    const lock = join(dir, 'store.json.lock');
    plantAbandoned(lock);
    writeFileSync(`${lock}.takeover`, '', { mode: 0o600 });
    // a fresh guard: another taker is judging the lock right now, so nobody else removes it
    await expect(takeLock(lock, 300)).rejects.toThrow(/timed out/);
    expect(existsSync(lock)).toBe(true);
    const old = new Date(Date.now() - GUARD_STALE_MS - 1_000);
    utimesSync(`${lock}.takeover`, old, old);
    const started = Date.now();
    const release = await takeLock(lock, 5_000);
    expect(Date.now() - started).toBeLessThan(2_000);
    await release();
    expect(readdirSync(dir)).toEqual([]);
  });

  it('30 trials × 4 processes, abandoned lock planted (keyed and main lock): never two holders at once', async () => {
    const dir = tmp();
    const script = join(dir, 'enter.mjs');
    // each holder appends enter/exit markers to a shared log; start lined up by a wall-clock instant
    writeFileSync(
      script,
      `import { appendFileSync } from 'node:fs';
import { FileStore } from ${JSON.stringify(dist)};
const [path, log, startAt, key] = process.argv.slice(2);
const store = new FileStore(path, { lockWaitMs: 20000 });
while (Date.now() < Number(startAt)) {}
await store.withLock(async () => {
  appendFileSync(log, 'enter ' + process.pid + '\\n');
  await new Promise((r) => setTimeout(r, 20));
  appendFileSync(log, 'exit ' + process.pid + '\\n');
}, key === '-' ? undefined : key);
`,
    );
    const overlapping: number[] = [];
    for (let trial = 0; trial < 30; trial++) {
      const path = join(dir, `store-${trial}.json`);
      const log = join(dir, `log-${trial}`);
      writeFileSync(log, '');
      const key = trial % 2 === 0 ? 'refresh ["iss","res"]' : undefined;
      plantAbandoned(lockFile(path, key));
      const startAt = String(Date.now() + 400);
      const codes = await Promise.all(Array.from({ length: 4 }, () => run([script, path, log, startAt, key ?? '-'])));
      expect(codes).toEqual([0, 0, 0, 0]);
      const lines = readFileSync(log, 'utf8').trim().split('\n');
      expect(lines).toHaveLength(8);
      let inside = 0;
      let most = 0;
      for (const line of lines) {
        inside += line.startsWith('enter ') ? 1 : -1;
        most = Math.max(most, inside);
      }
      if (most > 1) overlapping.push(trial);
      expect(existsSync(lockFile(path, key))).toBe(false);
    }
    expect(overlapping).toEqual([]);
    // no takeover leftovers
    expect(readdirSync(dir).filter((f) => f.includes('.lock'))).toEqual([]);
  }, 120_000);
});

describe('refresh with an abandoned refresh lock: one redemption across processes (r46 F3, OAuth 2.1 §4.3.1)', () => {
  it('clients on separate store instances (as processes), 20 rounds with an abandoned refresh lock: one redemption each round', async () => {
    const as = await rotatingAs(20);
    const dir = tmp();
    const resource = `${as.base}/mcp`;
    const client = (path: string) => fileStoreClient(as.base, path, { expirySkewSeconds: 7200 });
    const twice: string[] = [];
    for (let round = 0; round < 20; round++) {
      const path = join(dir, `store-${round}.json`);
      await client(path).authorize(resource);
      plantAbandoned(lockFile(path, `refresh ${JSON.stringify([as.base, resource])}`));
      const before = as.redeemed.length;
      const got = await Promise.all(Array.from({ length: 4 }, () => client(path).getTokens(resource)));
      const mine = as.redeemed.slice(before);
      if (mine.length !== 1) twice.push(`round ${round}: ${mine.join(',')}`);
      expect(new Set(got.map((t) => t?.access_token)).size).toBeLessThanOrEqual(mine.length);
    }
    expect(twice).toEqual([]);
  });

  it('5 trials × 3 real processes with an abandoned refresh lock planted: no refresh token is redeemed twice', async () => {
    const as = await rotatingAs(300);
    const dir = tmp();
    const script = join(dir, 'refresh.mjs');
    writeFileSync(
      script,
      `import { FileStore, McpAuthClient } from ${JSON.stringify(dist)};
const [path, base, startAt] = process.argv.slice(2);
const c = new McpAuthClient({ clientName: 'p', store: new FileStore(path), expirySkewSeconds: 7200,
  clientCredentials: { client_id: 'm2m', client_secret: 's', issuer: base } });
while (Date.now() < Number(startAt)) {}
const t = await c.getTokens(base + '/mcp');
if (!t) process.exit(3);
`,
    );
    const resource = `${as.base}/mcp`;
    const twice: string[] = [];
    for (let trial = 0; trial < 5; trial++) {
      const path = join(dir, `store-${trial}.json`);
      await fileStoreClient(as.base, path).authorize(resource);
      // the key the client refreshes under (client/tokens.ts): its lock, left by a process that died
      plantAbandoned(lockFile(path, `refresh ${JSON.stringify([as.base, resource])}`));
      const before = as.redeemed.length;
      const startAt = String(Date.now() + 400);
      const codes = await Promise.all(Array.from({ length: 3 }, () => run([script, path, as.base, startAt])));
      expect(codes).toEqual([0, 0, 0]);
      const mine = as.redeemed.slice(before);
      expect(mine.length).toBeGreaterThan(0);
      if (new Set(mine).size !== mine.length) twice.push(`trial ${trial}: ${mine.join(',')}`);
    }
    expect(twice).toEqual([]);
  }, 120_000);
});
