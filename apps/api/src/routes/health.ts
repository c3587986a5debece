import { Router } from 'express';
import { guard, type TaskQueue } from '@longrun/engine';
import type { Registry } from 'prom-client';

/** `/healthz` (process up), `/readyz` (Redis answers), `/metrics` (Prometheus). */
export function healthRouter(tasks: TaskQueue, registry: Registry, redisTimeoutMs: number): Router {
  const router = Router();
  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  router.get('/readyz', async (_req, res) => {
    try {
      await guard(() => tasks.ping(), Math.min(redisTimeoutMs, 1000));
      res.json({ status: 'ready' });
    } catch {
      res.status(503).setHeader('Retry-After', '2').json({ status: 'unavailable', redis: 'down' });
    }
  });
  router.get('/metrics', async (_req, res) => {
    res.type(registry.contentType).send(await registry.metrics());
  });
  return router;
}
