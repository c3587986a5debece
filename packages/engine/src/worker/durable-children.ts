import type { ChildrenCheck } from '../commands/index.js';
import type { DurableHost } from './durable-host.js';
import type { DurableRun } from './durable-context.js';
import { parkJob } from './park-job.js';
import { EXPIRY_WAKE_MS, keepPastExpiry } from './expiry.js';
import { parkRun, RunParked } from './run-control.js';

/** A parent waiting on children runs again this often at least (a wake-up lost in a crash). */
export const CHILD_RECHECK_MS = 60_000;

/**
 * Children a re-check reads, in turn, for an end whose count was lost (a worker died between
 * a child's terminal write and its count): a fixed number, so a re-check costs the same for 10
 * children as for 1 000, and each child is read once in `children / CHILD_PROBES` re-checks.
 */
export const CHILD_PROBES = 8;

/**
 * Returns once every child in `ids` ended; else parks the run (throws `RunParked`) until the last
 * one's end wakes it, or the re-check. Issue 40, item 7: the check is O(1) (the count children
 * keep as they end, one script on the parent's record, writing an event only when what it shows
 * changed), and reads children only past the earliest expiry noted of them (a child may be gone:
 * then all, and a gone child counts as ended, its outcome `child-gone`) or a few in turn
 * (`CHILD_PROBES`). `replayed`: this run did not make them (a wake-up or a re-check).
 */
export async function awaitChildren(
  run: DurableRun,
  host: DurableHost,
  ids: readonly string[],
  replayed: boolean,
): Promise<void> {
  const id = run.task.id;
  const recheckMs = host.childRecheckMs ?? CHILD_RECHECK_MS;
  let check = ready(run, await run.durable.checkChildren(id));
  if (check.ready) return;
  if (replayed) {
    const now = Date.now();
    const all = now >= check.expiresAt || ids.length <= CHILD_PROBES;
    const turn = (Math.floor(now / recheckMs) * CHILD_PROBES) % ids.length;
    const probe = all ? ids : [...ids, ...ids].slice(turn, turn + CHILD_PROBES);
    const open = await host.countEnded(id, probe);
    check = ready(run, await run.durable.checkChildren(id, all ? open : undefined));
    if (check.ready) return;
  }
  // Woken at the re-check, or just after the first child may be gone (its expiry), if sooner.
  const gone = check.expiresAt > Date.now() ? check.expiresAt + 1000 : Infinity;
  const until = Math.min(run.task.expiresAt - EXPIRY_WAKE_MS, Date.now() + recheckMs, gone);
  await keepPastExpiry(run, until);
  if (!(await parkJob(run, until))) throw parkRun(run.control, new RunParked());
  // The last child may have ended before the job was parked: its wake-up found nothing to wake.
  const after = await run.durable.checkChildren(id);
  if (after.kind === 'ok' && after.ready) await run.job.promote().catch(() => undefined);
  throw parkRun(run.control, new RunParked());
}

/** The check, unless the task is gone or finished: then the run stops. */
function ready(run: DurableRun, check: ChildrenCheck): { ready: boolean; expiresAt: number } {
  if (check.kind === 'ok') return check;
  run.stopIfGone(
    check.kind === 'missing'
      ? { ok: false, reason: 'missing' }
      : { ok: false, reason: 'refused', current: check.current },
  );
  throw run.control.stoppedBy ?? new Error(`task is ${check.kind}`);
}
