import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: [
      'packages/*/src/**/*.test.ts',
      'apps/*/src/**/*.test.ts',
      'tests/**/*.test.ts',
      // The quick part of the reliability suite (`npm run test:chaos` runs all of it, full size).
      'tests/chaos/hostile-input.chaos.ts',
      'tests/chaos/worker-crash.chaos.ts',
      'tests/chaos/redis-restart.chaos.ts',
    ],
    env: {
      CHAOS_SCALE: process.env.CHAOS_SCALE ?? '0.1',
      CHAOS_RESTART_VARIANTS: process.env.CHAOS_RESTART_VARIANTS ?? 'always:SIGKILL',
    },
    globalSetup: ['tests/global-setup.ts'],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
