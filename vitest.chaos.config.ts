import { defineConfig } from 'vitest/config';

// The reliability ("chaos") suite: `npm run test:chaos`. One file at a time (the scenarios load
// the machine and some start their own redis-server), with timeouts sized for the full scale.
export default defineConfig({
  test: {
    include: ['tests/chaos/**/*.chaos.ts'],
    globalSetup: ['tests/global-setup.ts'],
    pool: 'forks',
    maxWorkers: 1,
    fileParallelism: false,
    testTimeout: 900_000,
    hookTimeout: 120_000,
  },
});
