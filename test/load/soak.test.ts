import { describe, expect, it } from 'vitest';
import { shouldRunPgTests } from '../faults/helpers/postgres.js';
// The same soak as `npm run soak`, CI-sized (the script is plain JS on the built packages).
// @ts-expect-error -- plain ESM script without type declarations
import { runSoak } from '../../scripts/soak.mjs';

interface SoakResult {
  flows: number;
  completed: number;
  failed: number;
  failures: string[];
  tokenValidations: number;
  requestsPerInstance: number[];
  memory: { before: { heapUsedMB: number; rssMB: number }; after: { heapUsedMB: number; rssMB: number } };
}

const available = await shouldRunPgTests();

/**
 * Load, bounded: 40 complete flows at once (DCR → authorize → token → 5 validated MCP calls →
 * refresh → MCP call) against TWO AS instances sharing one PostgreSQL schema behind a loopback
 * round-robin balancer, with the demo MCP server. Zero failed flows; memory is reported, not
 * asserted (no wall-clock or size thresholds on a shared machine).
 */
describe.skipIf(!available)('load: concurrent flows against two AS instances on PostgreSQL', () => {
  it('40 concurrent complete flows, both instances serving, zero failures', async () => {
    const lines: string[] = [];
    const result = (await runSoak({ flows: 40, concurrency: 40, validations: 5, log: (line: string) => lines.push(line) })) as SoakResult;
    for (const line of lines) console.log(`[soak] ${line}`);
    console.log(
      `[soak] memory (whole test process: both AS, MCP server and clients): heapUsed ${result.memory.before.heapUsedMB} → ${result.memory.after.heapUsedMB} MB, ` +
        `RSS ${result.memory.before.rssMB} → ${result.memory.after.rssMB} MB`,
    );
    expect(result.failures).toEqual([]);
    expect(result.failed).toBe(0);
    expect(result.completed).toBe(40);
    expect(result.tokenValidations).toBe(40 * 6);
    expect(result.requestsPerInstance).toHaveLength(2);
    for (const count of result.requestsPerInstance) expect(count).toBeGreaterThan(40);
  }, 150_000);
});
