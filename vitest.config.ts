import { defineConfig } from 'vitest/config';

// One runner for the whole monorepo. Tests import packages by their public names, which
// resolve to the built `dist/` (npm test builds first, through `npm run typecheck`), so every
// test exercises what users get; a package's own tests may import its `src/` internals by path.
export default defineConfig({
  test: {
    include: [
      'test-utils/test/**/*.test.ts',
      'packages/*/test/**/*.test.ts',
      'apps/*/test/**/*.test.ts',
      'test/**/*.test.ts',
      'examples/*/test/**/*.test.ts',
    ],
    exclude: ['**/node_modules/**', '**/dist/**'],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
