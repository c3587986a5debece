// Command line and sizes of the benchmark run, and what every request sends.
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

// Strict for bench/run.mjs (a mistyped option stops it); other tools import the sizes and take
// options of their own.
const strict = /[\\/]run\.mjs$/.test(process.argv[1] ?? '');

export const { values: args } = parseArgs({
  strict,
  allowPositionals: true,
  options: {
    quick: { type: 'boolean', default: false },
    /** Rounds of every alternating measurement (default 3; 1 with --quick). */
    rounds: { type: 'string' },
    stored: { type: 'string' },
    'skip-profile': { type: 'boolean', default: false },
    'redis-url': { type: 'string' },
    'save-baseline': { type: 'boolean', default: false },
    json: { type: 'string' },
    'no-docs': { type: 'boolean', default: false },
    'keep-profiles': { type: 'boolean', default: false },
    /** `proxy`: only figure 8, bullmq-proxy side by side (needs BENCH_BULLMQ_PROXY). */
    only: { type: 'string' },
    /** What was measured, e.g. "before: <commit>"; shown in the docs (default: the git commit). */
    label: { type: 'string' },
  },
});

const quick = args.quick;

/** Sizes and durations; --quick shrinks them to try the script (its numbers mean little). */
export const C = {
  quick,
  rounds: Number(args.rounds ?? (quick ? 1 : 3)),
  loadS: quick ? 2 : 5,
  connections: 50,
  small: 1000,
  big: Number(args.stored ?? (quick ? 5000 : 100_000)),
  bigFallback: 20_000,
  /** Longest the big seed may take (estimated from the submit rate) before falling back. */
  seedBudgetS: 90,
  processJobs: quick ? 1000 : 8000,
  memoryTasks: quick ? 1000 : 5000,
  cancels: quick ? 20 : 100,
  cancelBatch: 25,
  rawAdds: quick ? 5000 : 20_000,
  setRequests: quick ? 20_000 : 100_000,
  scrapeS: quick ? 1 : 3,
  pollLatencyS: 1.5,
  profileS: quick ? 3 : 8,
  monitorSample: 200,
};

export const root = fileURLToPath(new URL('../..', import.meta.url));
export const ECHO_INPUT = { message: 'hello from the benchmark', n: 42, tags: ['a', 'b'] };
export const SUBMIT_BODY = JSON.stringify({ type: 'echo', input: ECHO_INPUT });
export const apiKey = `bench-${randomBytes(18).toString('base64url')}`;
export const auth = { authorization: `Bearer ${apiKey}` };
export const jsonAuth = { ...auth, 'content-type': 'application/json' };
