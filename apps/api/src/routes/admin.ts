import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import { Router, type Express } from 'express';
import type { AdminQueue, TaskEngine } from '@longrun/engine';
import { requireAdmin } from '../http/admin-auth.js';
import { adminHeaders, refuseCrossSiteWrites } from '../http/admin-guard.js';
import { offlinePage } from '../http/admin-offline.js';

export const ADMIN_PATH = '/admin';
export const ADMIN_QUEUES_PATH = `${ADMIN_PATH}/queues`;

/**
 * bull-board's queue dashboard at `/admin/queues`, behind the admin keys; read-only unless
 * `readOnly` is false (then operators can retry, promote and clean jobs from it). Queues of job
 * types registered after start-up join the board on its next request. Every answer under `/admin`
 * carries a CSP and may not be framed; writes from another site are refused (`admin-guard.ts`).
 */
export function adminRouter(
  engine: Pick<TaskEngine, 'adminQueues'>,
  keys: readonly string[],
  readOnly: boolean,
): Router {
  const serverAdapter = new ExpressAdapter();
  serverAdapter.setBasePath(ADMIN_QUEUES_PATH);
  // Every shard's queues; with several shards each name says its shard (`s2 tasks`).
  const current = (): AdminQueue[] => engine.adminQueues();
  const named = new Set(current().map((q) => q.shard)).size > 1;
  const adapt = (queues: AdminQueue[]) =>
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
  // bull-board serves from an Express app of its own, which would announce itself.
  const boardApp = serverAdapter.getRouter() as Express;
  boardApp.disable('x-powered-by');
  const router = Router();
  router.use(ADMIN_PATH, adminHeaders);
  router.use(
    ADMIN_QUEUES_PATH,
    refuseCrossSiteWrites,
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
    boardApp,
  );
  return router;
}
