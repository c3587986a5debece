import type { TaskPushNotificationConfig } from '@a2a-js/sdk';
import {
  RequestMalformedError,
  TaskNotFoundError,
  UnsupportedOperationError,
} from '@a2a-js/sdk/errors';
import type { A2APushTarget } from '@longrun/core';
import type { TaskEngine } from '@longrun/engine';
import { invalidProblem } from '../http/outcomes.js';
import { describe, notFound } from './errors.js';

/**
 * A2A push notification configs over the engine: a task keeps one, delivered by the engine's
 * webhook delivery. Each function is one engine call for the caller's tenant.
 */

/**
 * Sets the task's push notification config: each status change from now on is POSTed to `url`
 * as the A2A task (outbox, retries, the URL checked now and every address again before
 * connecting). One of the same id (the task's id when none is given) replaces it, another is
 * refused (delete the first).
 * @example await setPush(engine, tenant, taskId, pushConfigBody(params))
 */
export async function setPush(
  engine: TaskEngine,
  tenant: string,
  taskId: string,
  body: Record<string, unknown>,
): Promise<TaskPushNotificationConfig> {
  const outcome = await engine.setPushConfig(tenant, taskId, body);
  switch (outcome.kind) {
    case 'set':
      return configOf(taskId, outcome.config);
    case 'notFound':
      throw notFound(taskId);
    case 'invalid':
      throw new RequestMalformedError(describe(invalidProblem(outcome)));
    case 'pushTaken':
      throw new UnsupportedOperationError(
        `Task ${taskId} has push notification config "${outcome.configId}", and takes one: ` +
          'delete it first, or give its id to replace it',
      );
    case 'hasCallback':
      throw new UnsupportedOperationError(
        `Task ${taskId} was started with a "callback" (longrun webhooks), and takes no push ` +
          'notification config',
      );
  }
}

/** The task's config of that id; none: `TaskNotFoundError`, as A2A asks. */
export async function getPush(
  engine: TaskEngine,
  tenant: string,
  taskId: string,
  id: string,
): Promise<TaskPushNotificationConfig> {
  const outcome = await engine.pushConfig(tenant, taskId);
  if (outcome.kind === 'notFound') throw notFound(taskId);
  if (outcome.config?.id !== id) {
    throw new TaskNotFoundError(`Task ${taskId} has no push notification config "${id}"`);
  }
  return configOf(taskId, outcome.config);
}

/** The task's configs: none or one (a task keeps one). */
export async function listPush(
  engine: TaskEngine,
  tenant: string,
  taskId: string,
): Promise<TaskPushNotificationConfig[]> {
  const outcome = await engine.pushConfig(tenant, taskId);
  if (outcome.kind === 'notFound') throw notFound(taskId);
  return outcome.config ? [configOf(taskId, outcome.config)] : [];
}

/**
 * A config as the engine takes it (`a2aPushConfigSchema`): what the SDK's defaults leave empty
 * is left out, so an empty token sends no header and an empty id names the task's config.
 */
export function pushConfigBody(config: TaskPushNotificationConfig): Record<string, unknown> {
  const { id, url, token, authentication } = config;
  return {
    ...(id ? { id } : {}),
    url,
    ...(token ? { token } : {}),
    ...(authentication && (authentication.scheme || authentication.credentials)
      ? {
          authentication: {
            scheme: authentication.scheme,
            credentials: authentication.credentials,
          },
        }
      : {}),
  };
}

/** The A2A config a task keeps. */
function configOf(taskId: string, target: A2APushTarget): TaskPushNotificationConfig {
  return {
    tenant: '',
    id: target.id,
    taskId,
    url: target.url,
    token: target.token ?? '',
    authentication: target.authentication,
  };
}
