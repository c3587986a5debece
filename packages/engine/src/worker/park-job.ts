import type { ContextRun } from './job-context.js';

/**
 * Moves the run's job to BullMQ's delayed set until `until`; `false` when the run no longer holds
 * it. Under load a lock can expire before it is renewed and BullMQ's stalled check give the job
 * to another run ("Lock mismatch"): the job and its task are that run's, so the caller ends
 * writing nothing (tests/input-lost-lock.test.ts). Any other failure (Redis away) ends it the same
 * way: the job is still active under this run's lock, which lapses, and the stalled check runs it
 * again.
 */
export async function parkJob(run: ContextRun, until: number): Promise<boolean> {
  run.stopMark();
  try {
    await run.job.moveToDelayed(Math.max(until, Date.now() + 1), run.token);
    return true;
  } catch {
    return false;
  }
}
