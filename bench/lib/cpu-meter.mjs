/**
 * CPU time of the processes a case runs on, read around its timed windows: this process (the
 * servers under test) and, when the database runs on this machine, the PostgreSQL server's
 * processes. On a shared CPU they say where the time of an operation goes, which a rate alone
 * cannot (a slower store may cost little itself and only take CPU from the others).
 */
import { readdirSync, readFileSync } from 'node:fs';

/** CPU time of this process (all threads), in µs. */
export function ownCpuMicros() {
  const { user, system } = process.cpuUsage();
  return user + system;
}

/**
 * CPU time of every process named `postgres` (the server, its backends and helpers), in µs,
 * keyed by pid. Read from `/proc/<pid>/schedstat`, which counts in nanoseconds (the tick-based
 * `stat` counters are too coarse for windows of a few hundred milliseconds). `undefined` when
 * there is no `/proc` or no such process.
 */
export function postgresCpuByPid() {
  let pids;
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return undefined;
  }
  const byPid = new Map();
  for (const pid of pids) {
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() !== 'postgres') continue;
      const ns = Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]);
      if (Number.isFinite(ns)) byPid.set(pid, ns / 1000);
    } catch {
      // the process ended between the listing and the read
    }
  }
  return byPid.size ? byPid : undefined;
}

/**
 * CPU the PostgreSQL processes used between two `postgresCpuByPid` snapshots, in µs. A backend
 * that ended in between is left out (its last reading is gone); one that started counts whole.
 */
export function postgresCpuBetween(before, after) {
  if (!before || !after) return undefined;
  let total = 0;
  for (const [pid, micros] of after) total += micros - (before.get(pid) ?? 0);
  return total;
}

/** Whether a PostgreSQL URL names this machine (a loopback host or a Unix socket directory). */
export function isLocalDatabase(url) {
  let parsed;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  const socketDir = parsed.searchParams.get('host');
  if (socketDir?.startsWith('/')) return true;
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || /^127\./.test(host) || host === '';
}
