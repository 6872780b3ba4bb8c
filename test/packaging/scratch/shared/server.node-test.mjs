// node:test (node --test server.node-test.mjs): the same cases, no vitest.
import { after, before, test } from 'node:test';
import { CASES, startScenario } from './scenario.mjs';

let scenario;
before(async () => {
  scenario = await startScenario();
});
after(() => scenario?.close());

for (const [name, run] of Object.entries(CASES)) test(name, () => run(scenario));
