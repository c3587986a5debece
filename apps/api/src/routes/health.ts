import { Router } from 'express';
import type { TaskEngine } from '@longrun/engine';
import type { Registry } from 'prom-client';

/** `/healthz` (process up), `/readyz` (Redis answers), `/metrics` (Prometheus). */
export function healthRouter(engine: Pick<TaskEngine, 'health'>, registry: Registry): Router {
  const router = Router();
  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  router.get('/readyz', async (_req, res) => {
    const { redis } = await engine.health();
    if (redis === 'up') res.json({ status: 'ready' });
    else res.status(503).setHeader('Retry-After', '2').json({ status: 'unavailable', redis });
  });
  router.get('/metrics', async (_req, res) => {
    res.type(registry.contentType).send(await registry.metrics());
  });
  return router;
}
