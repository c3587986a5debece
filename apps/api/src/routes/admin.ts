import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import type { Queue } from 'bullmq';
import { Router } from 'express';
import type { TaskQueue } from '@longrun/engine';
import { requireAdmin } from '../http/admin-auth.js';
import { offlinePage } from '../http/admin-offline.js';

export const ADMIN_QUEUES_PATH = '/admin/queues';

/**
 * bull-board's queue dashboard at `/admin/queues`, behind the admin keys; read-only unless
 * `readOnly` is false (then operators can retry, promote and clean jobs from it). Queues of job
 * types registered after start-up join the board on its next request.
 */
export function adminRouter(
  shards: readonly { number: number; jobs: TaskQueue }[],
  keys: readonly string[],
  readOnly: boolean,
): Router {
  const serverAdapter = new ExpressAdapter();
  serverAdapter.setBasePath(ADMIN_QUEUES_PATH);
  // Every shard's queues; with several shards each name says its shard (`s2 tasks`).
  const named = shards.length > 1;
  const current = (): { queue: Queue; shard: number }[] =>
    shards.flatMap(({ number, jobs }) =>
      [...jobs.queues.values(), jobs.webhookQueue].map((queue) => ({ queue, shard: number })),
    );
  const adapt = (queues: { queue: Queue; shard: number }[]) =>
    queues.map(
      ({ queue, shard }) =>
        new BullMQAdapter(queue, {
          readOnlyMode: readOnly,
          ...(named ? { prefix: `s${shard} ` } : {}),
        }),
    );
  let shown = current();
  const board = createBullBoard({
    queues: adapt(shown),
    serverAdapter,
    options: { uiConfig: { boardTitle: 'longrun' } },
  });
  const router = Router();
  router.use(
    ADMIN_QUEUES_PATH,
    requireAdmin(keys),
    offlinePage,
    (_req, _res, next) => {
      const now = current();
      if (now.length !== shown.length) {
        shown = now;
        board.replaceQueues(adapt(now));
      }
      next();
    },
    serverAdapter.getRouter() as Router,
  );
  return router;
}
