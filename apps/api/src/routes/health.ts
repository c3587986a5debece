import { Router } from 'express';
import { guard, type TaskQueue } from '@longrun/engine';
import type { Registry } from 'prom-client';
import { mount } from '../openapi/operation.js';
import { health, metrics, ready } from './health.operations.js';

/** `/healthz` (process up), `/readyz` (Redis answers), `/metrics` (Prometheus). */
export function healthRouter(tasks: TaskQueue, registry: Registry, redisTimeoutMs: number): Router {
  const router = Router();
  mount(router, health, (_req, res) => {
    res.json({ status: 'ok' });
  });
  mount(router, ready, async (_req, res) => {
    try {
      await guard(() => tasks.ping(), Math.min(redisTimeoutMs, 1000));
      res.json({ status: 'ready' });
    } catch {
      res.status(503).setHeader('Retry-After', '2').json({ status: 'unavailable', redis: 'down' });
    }
  });
  mount(router, metrics, async (_req, res) => {
    res.type(registry.contentType).send(await registry.metrics());
  });
  return router;
}
