import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

/**
 * The task contract on a Redis Cluster (issue 15): the suite's HTTP-level files, run by
 * `npm run test:cluster` (and last in `npm test`) against a 3-primary cluster that
 * `tests/global-setup.ts` starts, with the tasks over 12 shards. Files that read keys by hand on a
 * single connection do not apply there (a cluster answers MOVED), so they are not listed.
 */
// Read by the global setup (this process) and inherited by the test workers and the processes
// they start.
process.env.LONGRUN_TEST_CLUSTER = '3';
process.env.LONGRUN_SHARDS = '12';

export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: [
      'tests/api-submit.test.ts',
      'tests/api-auth.test.ts',
      'tests/lifecycle.test.ts',
      'tests/batch-submit.test.ts',
      'tests/client.test.ts',
      'tests/cli.test.ts',
      'tests/schedules.test.ts',
      'tests/mcp-v2.test.ts',
      'tests/result-limits.test.ts',
    ],
  },
});
