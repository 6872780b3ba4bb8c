// vitest (this project's own install).
import { afterAll, beforeAll, test } from 'vitest';
import { CASES, startScenario } from './scenario.mjs';

let scenario;
beforeAll(async () => {
  scenario = await startScenario();
});
afterAll(() => scenario?.close());

for (const [name, run] of Object.entries(CASES)) test(name, () => run(scenario));
