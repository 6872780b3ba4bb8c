/**
 * Case 3 — authorization server throughput: authorization-code exchanges and refreshes per
 * second on the memory, SQLite and PostgreSQL stores, same configuration. The AS instances run
 * in this process; the driver runs in a child process (same Node binary).
 */
import { fork } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { BENCH_CLIENT, startBenchAs } from '../lib/as.mjs';
import { closeAll } from '../lib/servers.mjs';
import { isLocalDatabase, ownCpuMicros, postgresCpuBetween, postgresCpuByPid } from '../lib/cpu-meter.mjs';

const DRIVER = fileURLToPath(new URL('../lib/as-driver.mjs', import.meta.url));
export const PG_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test';

/**
 * One driver run. `meter`, when given, is called at the start and stop of every timed exchange
 * window (with the driver waiting) to read the CPU meters of the processes under test.
 */
function drive(input, meter) {
  return new Promise((resolve, reject) => {
    const child = fork(DRIVER, [JSON.stringify(input)], { stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('message', (message) => {
      meter?.(message);
      child.send({ read: true });
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (code !== 0) {
        const reason = stderr.split('\n').find((line) => /^\w*Error:/.test(line)) ?? `exit ${code ?? signal}`;
        return reject(new Error(`AS driver failed: ${reason.trim()}`));
      }
      try {
        resolve(JSON.parse(stdout.trim().split('\n').at(-1)));
      } catch {
        reject(new Error(`AS driver printed no result: ${stdout.slice(0, 200)}`));
      }
    });
  });
}

/**
 * CPU per exchange in this process (the AS instances; only the store whose turn it is works)
 * and in the PostgreSQL server, summed over a round's exchange windows, per store; and how busy
 * this process's event loop was in those windows (a store that makes requests wait on its
 * round trips leaves the loop idle while the CPU may still be busy elsewhere).
 */
function exchangeCpuMeter(storeCount, measurePostgres) {
  const totals = Array.from({ length: storeCount }, () => ({ as: 0, postgres: 0, ops: 0, loopActive: 0, loopIdle: 0 }));
  let open;
  return {
    onMark(message) {
      if (message.phase !== 'exchange') return;
      if (message.edge === 'start') {
        open = { as: ownCpuMicros(), postgres: measurePostgres ? postgresCpuByPid() : undefined, loop: performance.eventLoopUtilization() };
        return;
      }
      const total = totals[message.store];
      total.as += ownCpuMicros() - open.as;
      const loop = performance.eventLoopUtilization(open.loop);
      total.loopActive += loop.active;
      total.loopIdle += loop.idle;
      total.postgres += (measurePostgres && postgresCpuBetween(open.postgres, postgresCpuByPid())) || 0;
      total.ops += message.ops;
    },
    perExchange: () => totals.map((t) => ({ as: t.as / t.ops, postgres: t.postgres / t.ops, loopBusy: t.loopActive / (t.loopActive + t.loopIdle) })),
  };
}

export async function runAsThroughput({ rounds, codes, refreshes, concurrency }) {
  const resource = 'http://localhost:3000/mcp';
  const closers = [];
  const notes = [];
  const notRun = [];
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  const dir = await mkdtemp(join(tmpdir(), 'mcp-auth-kit-bench-'));
  closers.push(() => rm(dir, { recursive: true, force: true }));
  try {
    const stores = [
      ['memory', { kind: 'memory' }],
      ['SQLite', { kind: 'sqlite', file: join(dir, 'as.sqlite') }],
      ['PostgreSQL', { kind: 'postgres', url: PG_URL, schema }],
    ];
    const servers = [];
    for (const [name, storage] of stores) {
      if (storage.kind === 'postgres') {
        // Dropped afterwards even if the AS failed to start half-way through its migrations.
        closers.push(async () => {
          const client = new pg.Client({ connectionString: PG_URL });
          await client.connect();
          try {
            await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
          } finally {
            await client.end();
          }
        });
      }
      try {
        const as = await startBenchAs({ resource, storage, accessTokenTTL: 300 });
        closers.push(() => as.close());
        servers.push([name, as]);
      } catch (error) {
        // The other stores still run; the case is reported as incomplete (the run exits non-zero).
        notRun.push(`${name}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    if (servers.length === 0) throw new Error(`no store could start (${notRun.join('; ')})`);
    const pgNote = servers.some(([name]) => name === 'PostgreSQL') ? `PostgreSQL ${PG_URL.replace(/\/\/[^@]*@/, '//')} schema ${schema} (dropped afterwards); ` : '';
    notes.push(`${pgNote}SQLite in a temporary directory; memory = the in-process store.`);

    const rows = [];
    for (const [name] of servers) {
      rows.push({ label: `code exchanges, ${name}`, unit: 'ops/s', values: [] });
      rows.push({ label: `refreshes, ${name}`, unit: 'ops/s', values: [] });
    }
    const pgIndex = servers.findIndex(([name]) => name === 'PostgreSQL');
    // The server's CPU can only be read when it runs here (and /proc shows it).
    const measurePostgres = pgIndex >= 0 && isLocalDatabase(PG_URL) && postgresCpuByPid() !== undefined;
    const asCpuRows = servers.map(([name]) => ({ label: `AS CPU per exchange, ${name}`, unit: 'µs/op', values: [] }));
    const pgCpuRow = { label: 'PostgreSQL server CPU per exchange', unit: 'µs/op', values: [] };
    const pgTotalRow = { label: 'AS + server CPU per exchange, PostgreSQL', unit: 'µs/op', values: [] };
    const driverCpuRow = { label: 'load driver CPU per exchange', unit: 'µs/op', values: [] };
    const loopRows = servers.map(([name]) => ({ label: `AS event loop busy in exchanges, ${name}`, unit: 'share', values: [] }));
    rows.push(...asCpuRows, ...(measurePostgres ? [pgCpuRow, pgTotalRow] : []), driverCpuRow, ...loopRows);
    const input = {
      issuers: servers.map(([, as]) => as.issuer),
      ...BENCH_CLIENT,
      resource,
      scope: 'notes:read',
      codes,
      batch: Math.min(codes, 50),
      concurrency,
      refreshes,
    };
    // Warm-up, untimed: one pass at the timed concurrency (JIT, pool connections, and the
    // prepared statements of the batch sizes that concurrency produces).
    await drive({ ...input, codes: Math.min(100, codes), refreshes: Math.min(20, refreshes) });
    for (let round = 0; round < rounds; round++) {
      // One driver per round; inside it the stores take turns batch by batch.
      const meter = exchangeCpuMeter(servers.length, measurePostgres);
      const results = await drive({ ...input, firstTurn: round }, meter.onMark);
      results.forEach((result, i) => {
        rows[2 * i].values[round] = result.exchangesPerSec;
        rows[2 * i + 1].values[round] = result.refreshesPerSec;
      });
      const cpu = meter.perExchange();
      cpu.forEach((c, i) => {
        asCpuRows[i].values[round] = c.as;
        loopRows[i].values[round] = c.loopBusy;
      });
      if (measurePostgres) {
        pgCpuRow.values[round] = cpu[pgIndex].postgres;
        pgTotalRow.values[round] = cpu[pgIndex].as + cpu[pgIndex].postgres;
      }
      driverCpuRow.values[round] = results.reduce((sum, r) => sum + r.driverCpuPerExchange, 0) / results.length;
    }
    const running = new Set(servers.map(([name]) => name));
    const ratios = [
      { label: 'exchanges SQLite / memory', of: ['code exchanges, SQLite', 'code exchanges, memory'], target: { op: '>=', value: 0.8 } },
      { label: 'exchanges PostgreSQL / memory', of: ['code exchanges, PostgreSQL', 'code exchanges, memory'], target: { op: '>=', value: 0.8 } },
      { label: 'refreshes SQLite / memory', of: ['refreshes, SQLite', 'refreshes, memory'] },
      { label: 'refreshes PostgreSQL / memory', of: ['refreshes, PostgreSQL', 'refreshes, memory'] },
    ].filter((r) => r.of.every((label) => running.has(label.split(', ')[1])));
    if (running.has('memory') && pgIndex >= 0) {
      ratios.push({ label: 'CPU per exchange, AS: memory / PostgreSQL', of: ['AS CPU per exchange, memory', 'AS CPU per exchange, PostgreSQL'] });
      if (measurePostgres) ratios.push({ label: 'CPU per exchange, AS + server: memory / PostgreSQL', of: ['AS CPU per exchange, memory', pgTotalRow.label] });
    }
    return {
      notRun,
      title: `3. AS throughput — ${codes} code exchanges and ${refreshes} refreshes per store per round, concurrency ${concurrency}, ${rounds} rounds`,
      notes: [
        ...notes,
        'Codes come from the real /authorize flow with DEV_AUTO_LOGIN (untimed); only token requests are timed. The stores take turns in batches of 50 exchanges / 5 refreshes per chain.',
        'CPU rows, exchanges only: this process (the AS instances), the PostgreSQL server processes (when the database runs on this machine) and the load driver, per exchange; "CPU per exchange: memory / X" reads like a throughput ratio (1 = free).',
        'Event loop busy: the share of the exchange windows in which this process ran JavaScript or callbacks (1 = never waiting); below the memory store\'s, requests of that store wait on its round trips.',
        ...(pgIndex >= 0 && !measurePostgres ? ['PostgreSQL server CPU not measured: the database does not run on this machine or /proc is not readable.'] : []),
      ],
      rows,
      ratios,
    };
  } finally {
    await closeAll(closers);
  }
}
