import type { Request, Response } from 'express';
import {
  eventIdSchema,
  eventsQuerySchema,
  fieldErrors,
  Problem,
  taskNotFound,
  type TaskHandle,
} from '@longrun/core';
import type { TaskEngine } from '@longrun/engine';

/**
 * `GET /v1/jobs/<id>/events`: the engine's watch as server-sent events. The handle first (unless
 * resuming after `Last-Event-ID`), then one `task` event per change, until the task ends,
 * expires or is forgotten. Everything is read before the headers go out, so a Redis failure is
 * still a clean 503.
 */
export async function serveEvents(
  engine: TaskEngine,
  tenant: string,
  req: Request<{ id: string }>,
  res: Response,
): Promise<void> {
  const after = lastEventId(req);
  const watch = await engine.watch(tenant, req.params.id, after);
  if (watch.kind === 'notFound') throw taskNotFound();
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  res.write(`retry: ${retryMs(engine)}\n\n`);
  const send = (handle: TaskHandle, eventId: string) => {
    res.write(`id: ${eventId}\nevent: task\ndata: ${JSON.stringify(handle)}\n\n`);
  };
  if (watch.first) send(watch.first.handle, watch.first.eventId);
  let ended = false;
  const stop = watch.start({
    send,
    heartbeat: () => res.write(': ping\n\n'),
    end: () => {
      if (ended) return;
      ended = true;
      res.end();
    },
  });
  res.on('close', stop);
}

/** The reconnection delay SSE clients are told: the poll interval. */
function retryMs(engine: TaskEngine): number {
  return engine.pollIntervalMs;
}

function lastEventId(req: Request): string | undefined {
  const query = eventsQuerySchema.safeParse(req.query);
  if (!query.success) throw badRequest(fieldErrors(query.error));
  const header = req.headers['last-event-id'];
  if (header === undefined) return query.data.lastEventId;
  const parsed = eventIdSchema.safeParse(header);
  if (!parsed.success) throw badRequest(fieldErrors(parsed.error, 'Last-Event-ID'));
  return parsed.data;
}

function badRequest(errors: { path: string; message: string }[]): Problem {
  return new Problem({
    status: 400,
    title: 'Bad Request',
    detail: 'Invalid request',
    code: 'invalid-request',
    errors,
  });
}
