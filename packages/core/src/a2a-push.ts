import { z } from 'zod';
import type { Callback } from './schemas.js';

/** The header an A2A push notification carries its config's `token` in (as the A2A SDKs send it). */
export const A2A_TOKEN_HEADER = 'X-A2A-Notification-Token';

/** The content type of an A2A push notification's body. */
export const A2A_CONTENT_TYPE = 'application/a2a+json';

/** A header value: visible ASCII, spaces only inside (no CR/LF: nothing can be injected). */
const headerValue = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;

/**
 * An A2A push notification config as a door gives it to the engine (A2A's
 * `TaskPushNotificationConfig` without `tenant` and `taskId`, which the call names). The URL is
 * checked against the webhook target policy as a `callback` URL is; `token` and `authentication`
 * are sent as headers, so they must be header values.
 * @example a2aPushConfigSchema.parse({ url: 'https://hooks.example.com/a2a', token: 't-1' })
 */
export const a2aPushConfigSchema = z.strictObject({
  /** The config's id; empty or absent: the task's id. */
  id: z
    .string()
    .regex(/^[\x21-\x7e]{0,128}$/, 'must be at most 128 visible ASCII characters')
    .optional(),
  url: z.url({ protocol: /^https?$/ }).max(2048),
  /** Sent as `X-A2A-Notification-Token`. */
  token: z.string().max(1024).regex(headerValue, 'must be a header value').optional(),
  /** Sent as `Authorization: <scheme> <credentials>`. */
  authentication: z
    .strictObject({
      scheme: z.string().regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}$/, 'must be an HTTP auth scheme'),
      credentials: z.string().max(4096).regex(headerValue, 'must be a header value'),
    })
    .optional(),
});
export type A2APushConfig = z.infer<typeof a2aPushConfigSchema>;

/**
 * A task's A2A push notification config as its record keeps it, in the place of a `callback`:
 * the webhook dispatcher POSTs the A2A task (`toA2ATask`) there instead of the handle, with the
 * token and authentication as headers instead of an HMAC signature.
 */
export interface A2APushTarget {
  format: 'a2a';
  id: string;
  url: string;
  token?: string;
  authentication?: { scheme: string; credentials: string };
}

/** Where a task's status changes are POSTed: longrun's webhook, or an A2A push config. */
export type CallbackTarget = Callback | A2APushTarget;

/** Whether a task's callback is an A2A push notification config (not longrun's webhook). */
export function isA2APush(target: CallbackTarget): target is A2APushTarget {
  return 'format' in target && target.format === 'a2a';
}

/** Most A2A push notification configs one task keeps. */
export const MAX_PUSH_CONFIGS = 10;

/**
 * What a task's `callback` field holds: longrun's webhook, or its A2A push notification
 * configs (a list; records written before tasks kept several hold one config object).
 */
export type StoredCallback = CallbackTarget | A2APushTarget[];

/** Where a task's status changes go: each target its `callback` field names (none, one, several). */
export function callbackTargets(stored: StoredCallback | undefined): CallbackTarget[] {
  if (!stored) return [];
  return Array.isArray(stored) ? stored.filter((t) => isA2APush(t)) : [stored];
}

/** A task's A2A push notification configs, in the order they were made. */
export function pushTargetsOf(stored: StoredCallback | undefined): A2APushTarget[] {
  return callbackTargets(stored).filter((t) => isA2APush(t));
}
