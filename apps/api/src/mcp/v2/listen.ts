import type { Response } from 'express';
import type { TaskHandle } from '@longrun/core';
import type { OpenWatch, TaskEngine } from '@longrun/engine';
import { JSONRPC, TASKS_EXTENSION, type RpcError } from '../errors.js';
import { PUSHED_TASKS } from '../status-push.js';
import { SERVER_INFO } from '../v1-server.js';
import { isObject, type V2Request } from './framing.js';
import { detailedTask } from './views.js';

/** How many task ids one `subscriptions/listen` may name (as many as a 2025-11-25 push follows). */
export const LISTEN_MAX_TASKS = PUSHED_TASKS;

/** The `_meta` key naming the subscription a message belongs to: the listen request's id. */
const SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';

/** A listen request refused before its stream opens: a JSON-RPC error and its HTTP status. */
export interface ListenRefusal {
  error: RpcError;
  status?: number;
}

/** `-32021` (HTTP 400): task notifications asked for without declaring the tasks extension. */
export const NEEDS_TASKS: ListenRefusal = {
  status: 400,
  error: {
    code: JSONRPC.missingClientCapability,
    message: 'Missing required client capability',
    data: { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
  },
};

/**
 * `subscriptions/listen` with the tasks extension's filter field (`notifications.taskIds`, the
 * extension's `TaskSubscriptionNotifications`): the answer is a stream of server-sent events on
 * the POST. First `notifications/subscriptions/acknowledged` with the task ids agreed to (the
 * named ids that are this tenant's tasks; unknown and other tenants' ids are left out alike),
 * then a `notifications/tasks` with the full `DetailedTask` (as `tasks/get` answers it) for each
 * task as it is now and at each change of its status after that, every one carrying the
 * request's id as `io.modelcontextprotocol/subscriptionId`. When every agreed task has ended
 * (its terminal state sent) or is gone, the server ends the subscription with the listen
 * request's result (`SubscriptionsListenResult`). No other filter field is honoured (they are
 * left out of the acknowledgement, as the schema says of unsupported types).
 *
 * Each task is followed with the engine's watch (per-task wake-ups from any replica or worker,
 * the task's event list read from Redis): nothing is kept here but the open stream. Refused
 * before anything is sent: a filter that is not an object or ids that are not strings
 * (`-32602`), more than `LISTEN_MAX_TASKS` ids (`-32602`), task ids from a request that did not
 * declare the extension (`-32021`).
 * @example const refused = await listen(engine, 'acme', request, res) // undefined: streaming
 */
export async function listen(
  engine: TaskEngine,
  tenant: string,
  request: V2Request,
  res: Response,
): Promise<ListenRefusal | undefined> {
  const filter = readFilter(request);
  if ('error' in filter) return filter;
  const watches = new Map<string, OpenWatch>();
  for (const id of filter.taskIds ?? []) {
    const watch = await engine.watch(tenant, id);
    if (watch.kind === 'open') watches.set(id, watch);
  }
  if (res.destroyed) return undefined; // the client left while the tasks were read

  const meta = { [SUBSCRIPTION_ID]: request.id };
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  let lastWrite = Date.now();
  const write = (message: Record<string, unknown>) => {
    lastWrite = Date.now();
    res.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', ...message })}\n\n`);
  };
  write({
    method: 'notifications/subscriptions/acknowledged',
    params: {
      _meta: meta,
      notifications: filter.taskIds === undefined ? {} : { taskIds: [...watches.keys()] },
    },
  });

  const stops: (() => void)[] = [];
  let open = watches.size;
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    for (const stop of stops) stop();
  };
  const finish = () => {
    if (closed) return;
    write({
      id: request.id,
      result: {
        resultType: 'complete',
        _meta: { ...meta, 'io.modelcontextprotocol/serverInfo': SERVER_INFO },
      },
    });
    close();
    res.end();
  };
  res.on('close', close);
  for (const watch of watches.values()) {
    let told: string | undefined;
    const send = (handle: TaskHandle) => {
      if (closed || handle.status === told) return;
      told = handle.status;
      const { resultType: _complete, ...task } = detailedTask(handle);
      write({ method: 'notifications/tasks', params: { ...task, _meta: meta } });
    };
    if (watch.first) send(watch.first.handle);
    let ended = false;
    stops.push(
      watch.start({
        send,
        // Every task's watch beats; one comment now and then keeps the connection open.
        heartbeat: () => {
          if (!closed && Date.now() - lastWrite >= 1000) {
            lastWrite = Date.now();
            res.write(': ping\n\n');
          }
        },
        end: () => {
          if (ended) return;
          ended = true;
          open -= 1;
          if (open === 0) finish();
        },
      }),
    );
  }
  if (open === 0) finish();
  return undefined;
}

/** The listen request's filter, as far as it is served: the task ids, deduplicated. */
function readFilter(request: V2Request): { taskIds: string[] | undefined } | ListenRefusal {
  const notifications = request.params.notifications;
  if (!isObject(notifications)) return invalidParams('params.notifications must be an object');
  const ids = notifications.taskIds;
  if (ids === undefined) return { taskIds: undefined };
  if (!Array.isArray(ids) || !ids.every((id): id is string => typeof id === 'string')) {
    return invalidParams('params.notifications.taskIds must be an array of strings');
  }
  if (!request.tasks) return NEEDS_TASKS;
  const taskIds = [...new Set(ids)];
  if (taskIds.length > LISTEN_MAX_TASKS) {
    return invalidParams(
      `params.notifications.taskIds names ${taskIds.length} tasks; at most ${LISTEN_MAX_TASKS} per subscription`,
    );
  }
  return { taskIds };
}

function invalidParams(message: string): ListenRefusal {
  return { error: { code: JSONRPC.invalidParams, message } };
}
