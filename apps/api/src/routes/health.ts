import { Router } from 'express';
import type { TaskEngine } from '@longrun/engine';
import type { Registry } from 'prom-client';
import { mount } from '../openapi/operation.js';
import { health, metrics, ready } from './health.operations.js';

/** `/healthz` (process up), `/readyz` (Redis answers), `/metrics` (Prometheus). */
export function healthRouter(engine: Pick<TaskEngine, 'health'>, registry: Registry): Router {
  const router = Router();
  mount(router, health, (_req, res) => {
    res.json({ status: 'ok' });
  });
  mount(router, ready, async (_req, res) => {
    const { redis } = await engine.health();
    if (redis === 'up') res.json({ status: 'ready' });
    else res.status(503).setHeader('Retry-After', '2').json({ status: 'unavailable', redis });
  });
  mount(router, metrics, async (_req, res) => {
    res.type(registry.contentType).send(await registry.metrics());
  });
  return router;
}
