import { readdirSync, readFileSync } from 'node:fs';
import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

/**
 * The second pass of `npm test`: every test that starts the built apps as processes, again, with
 * the apps on the pinned Bun (`LONGRUN_TEST_RUNTIME=bun`, read by tests/helpers/processes.ts).
 * The list finds itself: a test file is in it when it starts an app through those helpers.
 * The two runtime tests choose their runtime themselves, so they are not run twice.
 */
const STARTS_APPS = /\b(startApp|startWorker|spawnApp|runApp|startApiProcess|startScript)\(/;
const OWN_RUNTIME = new Set(['bun-runtime.test.ts', 'node-lts.test.ts']);
export const processTests = readdirSync('tests')
  .filter((f) => f.endsWith('.test.ts') && !OWN_RUNTIME.has(f))
  .filter((f) => STARTS_APPS.test(readFileSync(`tests/${f}`, 'utf8')))
  .map((f) => `tests/${f}`);

// Not mergeConfig: it would add this include list to the base one instead of replacing it.
export default defineConfig({
  test: {
    ...base.test,
    include: processTests,
    env: { ...base.test?.env, LONGRUN_TEST_RUNTIME: 'bun' },
  },
});
