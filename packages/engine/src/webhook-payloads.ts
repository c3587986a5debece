import {
  A2A_CONTENT_TYPE,
  A2A_TOKEN_HEADER,
  toA2ATask,
  WEBHOOK_HEADERS,
  webhookSignature,
  type A2APushTarget,
  type A2AStreamResponse,
  type Callback,
  type TaskEvent,
  type TaskHandle,
  type WebhookPayload,
} from '@longrun/core';

const USER_AGENT = 'longrun-webhooks/1';

/** What one delivery POSTs. */
export interface Delivery {
  body: string;
  headers: Record<string, string>;
}

/** longrun's webhook: `task.updated` with the handle, HMAC-signed when the callback has a secret. */
export function webhookDelivery(
  deliveryId: string,
  event: TaskEvent,
  task: TaskHandle,
  callback: Callback,
): Delivery {
  const payload: WebhookPayload = {
    id: deliveryId,
    type: 'task.updated',
    createdAt: new Date(event.updatedAt).toISOString(),
    task,
  };
  const body = JSON.stringify(payload);
  const timestamp = Math.floor(Date.now() / 1000);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    [WEBHOOK_HEADERS.deliveryId]: payload.id,
    [WEBHOOK_HEADERS.timestamp]: String(timestamp),
  };
  if (callback.secret) {
    headers[WEBHOOK_HEADERS.signature] = webhookSignature(callback.secret, timestamp, body);
  }
  return { body, headers };
}

/**
 * An A2A push notification: a `StreamResponse` carrying the A2A task as it was at the change,
 * with the config's `token` in `X-A2A-Notification-Token` and its `authentication` as
 * `Authorization`. The delivery id (the same on every retry) and the time are sent as for a
 * webhook, so a receiver can drop duplicates; there is no signature (A2A has no secret).
 */
export function a2aDelivery(deliveryId: string, task: TaskHandle, target: A2APushTarget): Delivery {
  const payload: A2AStreamResponse = { task: toA2ATask(task) };
  const headers: Record<string, string> = {
    'content-type': A2A_CONTENT_TYPE,
    'user-agent': USER_AGENT,
    [WEBHOOK_HEADERS.deliveryId]: deliveryId,
    [WEBHOOK_HEADERS.timestamp]: String(Math.floor(Date.now() / 1000)),
  };
  if (target.token) headers[A2A_TOKEN_HEADER] = target.token;
  if (target.authentication) {
    const { scheme, credentials } = target.authentication;
    headers.authorization = `${scheme} ${credentials}`;
  }
  return { body: JSON.stringify(payload), headers };
}
