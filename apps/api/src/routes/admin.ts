import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import type { Queue } from 'bullmq';
import { Router } from 'express';
import { requireAdmin } from '../http/admin-auth.js';

export const ADMIN_QUEUES_PATH = '/admin/queues';

/**
 * bull-board's queue dashboard at `/admin/queues`, behind the admin keys; read-only unless
 * `readOnly` is false (then operators can retry, promote and clean jobs from it).
 */
export function adminRouter(
  queues: readonly Queue[],
  keys: readonly string[],
  readOnly: boolean,
): Router {
  const serverAdapter = new ExpressAdapter();
  serverAdapter.setBasePath(ADMIN_QUEUES_PATH);
  createBullBoard({
    queues: queues.map((q) => new BullMQAdapter(q, { readOnlyMode: readOnly })),
    serverAdapter,
    options: { uiConfig: { boardTitle: 'longrun' } },
  });
  const router = Router();
  router.use(ADMIN_QUEUES_PATH, requireAdmin(keys), serverAdapter.getRouter() as Router);
  return router;
}
