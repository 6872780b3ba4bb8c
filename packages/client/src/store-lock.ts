import { constants, readFileSync } from 'node:fs';
import { lstat, open, unlink, type FileHandle } from 'node:fs/promises';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { ERR, McpAuthError } from './errors.js';
import { assertTrusted, factsOf } from './store-trust.js';

/**
 * What a lock file says about its holder (issue 46 item 4): enough for another process to tell a
 * live holder from one that is gone, instead of judging by the file's age alone.
 */
export interface LockHolder {
  pid: number;
  host: string;
  /** Linux boot id: the same pid after a reboot is another process. */
  boot?: string | undefined;
  /** When the holder process started (epoch ms). */
  started: number;
}

/** The holder refreshes the lock file's mtime this often while it holds the lock. */
export const HEARTBEAT_MS = 2_000;
/**
 * A lock whose heartbeat is older than this is left behind: by a holder on another machine (a
 * shared home) whose pid cannot be asked, by an unreadable or old-format lock file, or by a pid
 * that lives on but does not beat (reused by an unrelated process, or hung).
 */
export const SILENT_HOLDER_MS = 30_000;

let ownBoot: string | undefined | null = null;
function bootId(): string | undefined {
  if (ownBoot === null) {
    try {
      ownBoot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || undefined;
    } catch {
      ownBoot = undefined;
    }
  }
  return ownBoot;
}

export function ownHolder(): LockHolder {
  return { pid: process.pid, host: hostname(), boot: bootId(), started: Math.round(Date.now() - process.uptime() * 1000) };
}

/** The holder a lock file names; undefined when it is not a lock file of this format. */
export function parseHolder(text: string): LockHolder | undefined {
  try {
    const v = JSON.parse(text) as Partial<LockHolder>;
    if (!v || typeof v !== 'object' || !Number.isSafeInteger(v.pid) || (v.pid as number) <= 0 || typeof v.host !== 'string')
      return undefined;
    if (typeof v.started !== 'number') return undefined;
    return { pid: v.pid as number, host: v.host, boot: typeof v.boot === 'string' ? v.boot : undefined, started: v.started };
  } catch {
    return undefined;
  }
}

/** True when a process with this pid exists on this machine (`kill(pid, 0)`: EPERM means it exists). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * When the process `pid` started (epoch ms), where the system says (Linux `/proc`: start time in
 * clock ticks since boot, USER_HZ = 100, plus the boot time); undefined elsewhere.
 */
export function pidStartedAt(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // fields after the command name, which may itself hold spaces and parentheses
    const ticks = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
    const btime = Number(/^btime (\d+)$/m.exec(readFileSync('/proc/stat', 'utf8'))?.[1]);
    return Number.isFinite(ticks) && Number.isFinite(btime) && btime > 0 ? btime * 1000 + ticks * 10 : undefined;
  } catch {
    return undefined;
  }
}

/** How far the start time a holder wrote may be from the one the system gives for its pid. */
const START_TOLERANCE_MS = 5_000;

export interface ProcessProbe {
  alive(pid: number): boolean;
  startedAt(pid: number): number | undefined;
}
const SYSTEM: ProcessProbe = { alive: pidAlive, startedAt: pidStartedAt };

/**
 * Whether a lock may be taken over: `held` while its holder lives, `abandoned` once it is gone.
 * Pure but for `probe` (the system's view of a pid), so each case is tested as it is.
 */
export function lockState(
  holder: LockHolder | undefined,
  heartbeatAgeMs: number,
  self: LockHolder,
  probe: ProcessProbe = SYSTEM,
): 'held' | 'abandoned' {
  const silent = heartbeatAgeMs > SILENT_HOLDER_MS;
  if (!holder || holder.host !== self.host) return silent ? 'abandoned' : 'held';
  // same machine, another boot: every process of that boot is gone
  if (holder.boot && self.boot && holder.boot !== self.boot) return 'abandoned';
  if (!probe.alive(holder.pid)) return 'abandoned';
  // the pid lives, but as another process than the one that wrote the lock (pid reuse)
  const started = probe.startedAt(holder.pid);
  if (started !== undefined && Math.abs(started - holder.started) > START_TOLERANCE_MS) return 'abandoned';
  // its holder, unless it stopped beating for far longer than a beat (a hang, or a reuse unseen above)
  return heartbeatAgeMs > 10 * SILENT_HOLDER_MS ? 'abandoned' : 'held';
}

const NOFOLLOW = constants.O_NOFOLLOW ?? 0;

/**
 * Takes the lock file `path` (created O_EXCL, never through a symbolic link), waiting at most
 * `waitMs` for a live holder; returns its release. While held, its mtime is refreshed every
 * {@link HEARTBEAT_MS}, so others see a live holder; release removes it only if it is still ours.
 */
export async function takeLock(path: string, waitMs: number): Promise<() => Promise<void>> {
  const self = ownHolder();
  const deadline = Date.now() + waitMs;
  for (;;) {
    let fh: FileHandle;
    try {
      fh = await open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | NOFOLLOW, 0o600);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = await inspect(path);
      if (holder === 'gone') continue;
      // another taker holds the takeover guard: wait for it as for a holder
      const abandoned = lockState(holder.holder, holder.ageMs, self) === 'abandoned';
      if (abandoned && (await takeOver(path, self))) continue;
      if (Date.now() > deadline) {
        const who = abandoned
          ? `another process taking it over (${path}.takeover)`
          : holder.holder
            ? `process ${holder.holder.pid} on ${holder.holder.host}`
            : 'another process';
        throw new McpAuthError(
          ERR.STORE_BUSY,
          `timed out after ${Math.round(waitMs / 1000)} s waiting for the token store lock ${path}, held by ${who}; try again when it is done`,
        );
      }
      await sleep(25);
      continue;
    }
    return held(path, fh, self);
  }
}

/**
 * A takeover guard older than this was left by a process that died between taking and leaving
 * it: it is held only for one lstat, read and unlink.
 */
export const GUARD_STALE_MS = 10_000;

/**
 * Removes the abandoned lock `path` so that the next exclusive create may take it (review r46 F3).
 * Several processes may judge one lock abandoned at once; had each unlinked it, a late unlink
 * would remove the lock another of them had just created, and two would hold it. So the lock is
 * judged again, and removed, only while holding `<path>.takeover` (created O_EXCL): the file
 * judged then is the one unlinked, since nothing else removes or replaces an abandoned lock
 * (its holder is gone, a create fails while it exists, other takeovers wait for the guard).
 */
async function takeOver(path: string, self: LockHolder): Promise<boolean> {
  const guard = `${path}.takeover`;
  let fh: FileHandle;
  try {
    fh = await open(guard, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | NOFOLLOW, 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return clearStaleGuard(guard);
  }
  const { ino } = await fh.stat();
  try {
    const again = await inspect(path);
    // still ours: a guard cleared as stale (this process stalled past GUARD_STALE_MS) judges nothing
    const guarded = (await lstat(guard).catch(() => undefined))?.ino === ino;
    if (guarded && again !== 'gone' && lockState(again.holder, again.ageMs, self) === 'abandoned')
      await unlink(path).catch(() => undefined);
    return true;
  } finally {
    await fh.close().catch(() => undefined);
    const current = await lstat(guard).catch(() => undefined);
    if (current && current.ino === ino) await unlink(guard).catch(() => undefined);
  }
}

/** Removes a takeover guard left by a process that died while holding it; true when there is none left. */
async function clearStaleGuard(guard: string): Promise<boolean> {
  let st: Awaited<ReturnType<typeof lstat>>;
  try {
    st = await lstat(guard);
  } catch {
    return true;
  }
  assertTrusted('lock', guard, factsOf(st));
  if (Date.now() - st.mtimeMs <= GUARD_STALE_MS) return false;
  await unlink(guard).catch(() => undefined);
  return true;
}

/** The lock file as found: refused when it is a symbolic link or not its user's own. */
async function inspect(path: string): Promise<{ holder: LockHolder | undefined; ageMs: number } | 'gone'> {
  let st: Awaited<ReturnType<typeof lstat>>;
  try {
    st = await lstat(path);
  } catch {
    return 'gone';
  }
  // a symbolic link (dangling or not) is never waited for, followed or removed: it is an error
  assertTrusted('lock', path, factsOf(st));
  let text = '';
  try {
    const fh = await open(path, constants.O_RDONLY | NOFOLLOW);
    try {
      const { bytesRead, buffer } = await fh.read(Buffer.alloc(512), 0, 512, 0);
      text = buffer.subarray(0, bytesRead).toString('utf8');
    } finally {
      await fh.close();
    }
  } catch {
    // removed meanwhile: the next attempt creates it
  }
  return { holder: parseHolder(text), ageMs: Date.now() - st.mtimeMs };
}

async function held(path: string, fh: FileHandle, self: LockHolder): Promise<() => Promise<void>> {
  try {
    await fh.writeFile(JSON.stringify(self));
  } catch (err) {
    await fh.close().catch(() => undefined);
    await unlink(path).catch(() => undefined);
    throw err;
  }
  const { ino } = await fh.stat();
  const beat = setInterval(() => {
    const now = new Date();
    fh.utimes(now, now).catch(() => undefined);
  }, HEARTBEAT_MS);
  beat.unref?.();
  return async () => {
    clearInterval(beat);
    await fh.close().catch(() => undefined);
    // taken over meanwhile (we were judged gone): the file is now another holder's
    const current = await lstat(path).catch(() => undefined);
    if (current && current.ino === ino) await unlink(path).catch(() => undefined);
  };
}
