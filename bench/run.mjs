/**
 * `npm run bench` (after the build): runs every benchmark case, prints each as a table of
 * min / median / max over rounds and the ratios between cases measured in the same round,
 * with PASS/MISS next to each target. Numbers never fail the run; a case that could not run
 * does (exit code 1).
 *
 *   npm run bench                     full run (several minutes)
 *   npm run bench -- --quick          short run (or BENCH_QUICK=1)
 *   npm run bench -- --only=1,2       some cases only (or BENCH_ONLY=1,2)
 */
import { fork } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { fmtAgainst, renderCase } from './lib/report.mjs';

const args = process.argv.slice(2);
const quick = args.includes('--quick') || ['1', 'true'].includes(process.env.BENCH_QUICK ?? '');
const onlyArg = args.find((a) => a.startsWith('--only='))?.slice(7) ?? process.env.BENCH_ONLY;
const only = onlyArg ? new Set(onlyArg.split(',').map((s) => s.trim())) : undefined;
/** Internal: run this one case and hand its report to the parent (see `runInOwnProcess`). */
const childCase = args.find((a) => a.startsWith('--case='))?.slice(7);
const unknown = args.filter((a) => a !== '--quick' && !a.startsWith('--only=') && !a.startsWith('--case='));
if (unknown.length) {
  process.stderr.write(`unknown argument(s): ${unknown.join(' ')}\nusage: node bench/run.mjs [--quick] [--only=1,1b,2,3,4,5,6,7]\n`);
  process.exit(2);
}

const settings = quick
  ? {
      rs: { rounds: 2, duration: 2, connections: 50 },
      plain: { rounds: 2, duration: 2, connections: 50, mode: 'plain' },
      validation: { rounds: 3, sampleMs: 300 },
      as: { rounds: 2, codes: 40, batch: 40, refreshes: 40, concurrencies: [4, 8], refreshChains: 8 },
      flow: { rounds: 2, runsPerRound: 1 },
      cimd: { rounds: 2, flowsPerRound: 3 },
      rsShared: { rounds: 2, requests: 200, concurrency: 16, sampleMs: 100 },
      asScale: { rounds: 2, codes: 40, concurrency: 8 },
    }
  : {
      rs: { rounds: 14, duration: 4, connections: 50 },
      plain: { rounds: 20, duration: 2, connections: 50, mode: 'plain' },
      validation: { rounds: 7, sampleMs: 2000 },
      as: { rounds: 7, codes: 200, batch: 100, refreshes: 320, concurrencies: [10, 32], refreshChains: 32 },
      flow: { rounds: 25, runsPerRound: 8 },
      cimd: { rounds: 5, flowsPerRound: 10 },
      rsShared: { rounds: 5, requests: 1000, concurrency: 16, sampleMs: 1000 },
      asScale: { rounds: 5, codes: 64, concurrency: 32 },
    };

const cases = [
  { id: '1', name: 'resource-server overhead', run: async () => (await import('./cases/rs-overhead.mjs')).runRsOverhead(settings.rs) },
  {
    id: '1b',
    name: 'resource-server overhead, plain route',
    run: async () => (await import('./cases/rs-overhead.mjs')).runRsOverhead(settings.plain),
  },
  { id: '2', name: 'token validation', run: async () => (await import('./cases/validation.mjs')).runValidation(settings.validation) },
  { id: '3', name: 'AS throughput', run: async () => (await import('./cases/as-throughput.mjs')).runAsThroughput(settings.as) },
  { id: '4', name: 'full flow', run: async () => (await import('./cases/full-flow.mjs')).runFullFlow(settings.flow) },
  { id: '5', name: 'CIMD cold vs warm', run: async () => (await import('./cases/cimd.mjs')).runCimd(settings.cimd) },
  {
    id: '6',
    name: 'resource-server shared state',
    run: async () => (await import('./cases/shared-state.mjs')).runRsSharedState(settings.rsShared),
  },
  { id: '7', name: 'AS scaled out', run: async () => (await import('./cases/shared-state.mjs')).runAsScaleOut(settings.asScale) },
];

/** Runs one case in this process: its rendered table, its ratios, and the parts that could not run. */
async function runCase(c) {
  const result = await c.run();
  const { text, ratios } = renderCase(result);
  return { text, ratios, notRun: result.notRun ?? [] };
}

if (childCase !== undefined) {
  const c = cases.find((x) => x.id === childCase);
  let message;
  try {
    message = { ok: true, ...(await runCase(c)) };
  } catch (error) {
    message = { ok: false, error: error instanceof Error ? error.message : String(error), stack: error?.stack };
  }
  // a case may leave handles open (pools closing, sockets lingering): the report is what counts
  process.send(message, () => process.exit(0));
} else {
  await main();
}

/**
 * Each case in a fresh Node process: what one case leaves behind (a grown heap, code the JIT
 * specialised for another case's requests, timers and sockets still closing) must not weigh on
 * the next. A full run then measures each case as `--only` does.
 */
function runInOwnProcess(c) {
  return new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(import.meta.url), [`--case=${c.id}`, ...(quick ? ['--quick'] : [])], { stdio: 'inherit' });
    let report;
    child.on('message', (message) => (report = message));
    child.on('error', reject);
    child.on('exit', (code) => {
      if (report === undefined) return reject(new Error(`the case's process ended (exit code ${code}) without a report`));
      if (!report.ok) {
        if (process.env.BENCH_VERBOSE && report.stack) process.stderr.write(`${report.stack}\n`);
        return reject(new Error(report.error));
      }
      resolve(report);
    });
  });
}

async function main() {
  const cpu = cpus();
  process.stdout.write(
    [
      `mcp-auth-kit benchmarks (${quick ? 'quick' : 'full'} run) — ${new Date().toISOString()}`,
      `Node ${process.version} (${process.execPath}), ${process.platform}/${process.arch}, ${cpu.length} × ${cpu[0]?.model ?? 'unknown CPU'}, load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
      'Only ratios of cases measured in the same round are meaningful; absolute numbers depend on the machine and its load.',
      '',
    ].join('\n') + '\n',
  );

  const failed = [];
  const evaluated = [];
  for (const c of cases) {
    if (only && !only.has(c.id)) continue;
    const started = Date.now();
    try {
      const { text, ratios, notRun } = await runInOwnProcess(c);
      evaluated.push(...ratios);
      process.stdout.write(`${text}\n`);
      // Part of a case that could not run (e.g. PostgreSQL unreachable) fails the run like a whole case.
      for (const reason of notRun) process.stdout.write(`   NOT RUN: ${reason}\n`);
      if (notRun.length) failed.push(c);
      process.stdout.write(`   (${((Date.now() - started) / 1000).toFixed(0)} s)\n\n`);
    } catch (error) {
      failed.push(c);
      process.stdout.write(`== ${c.id}. ${c.name}: FAILED TO RUN — ${describeError(error)}\n\n`);
    }
  }

  process.stdout.write('== targets (median of same-round ratios; numbers never fail the run)\n');
  for (const r of evaluated.filter((r) => r.target)) {
    process.stdout.write(
      `   ${r.verdict.padEnd(5)} ${r.label} = ${Number.isFinite(r.median) ? fmtAgainst(r.median, r.target) : '—'} (target ${r.target.op === '>=' ? '≥' : '≤'} ${r.target.value})\n`,
    );
  }
  if (failed.length) {
    process.stdout.write(`\n${failed.length} case(s) failed to run: ${failed.map((c) => `${c.id} (${c.name})`).join(', ')}\n`);
    process.exitCode = 1;
  }
}

/** An error's message with its causes (undici's "fetch failed" says why only in `cause`) and where it was thrown. */
function describeError(error) {
  if (!(error instanceof Error)) return String(error);
  const parts = [error.message];
  for (let cause = error.cause, depth = 0; cause !== undefined && depth < 3; cause = cause?.cause, depth++) {
    parts.push(cause instanceof Error ? `${cause.code ?? cause.name}: ${cause.message}` : String(cause));
  }
  const at = error.stack
    ?.split('\n')
    .find((line) => line.includes('/bench/'))
    ?.trim();
  return `${parts.join(' ← ')}${at ? ` (${at})` : ''}`;
}
