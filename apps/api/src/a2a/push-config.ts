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
 * A2A push notification configs over the engine: a task keeps several (up to
 * `MAX_PUSH_CONFIGS`, by id, in the task's record in Redis, so every replica reads the same),
 * each sent every change by the engine's webhook delivery. Each function is one engine call for
 * the caller's tenant.
 */

/**
 * Sets the task's push notification config: each status change from now on is POSTed to `url`
 * as the A2A task (outbox, retries, the URL checked now and every address again before
 * connecting). One of the same id (the task's id when none is given) replaces it, another is
 * added beside it; past the cap it is refused (delete one first).
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
    case 'pushFull':
      throw new UnsupportedOperationError(
        `Task ${taskId} has ${outcome.max} push notification configs, the most it keeps: ` +
          'delete one first, or give the id of one to replace it',
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
  const config = outcome.configs.find((c) => c.id === id);
  if (!config) {
    throw new TaskNotFoundError(`Task ${taskId} has no push notification config "${id}"`);
  }
  return configOf(taskId, config);
}

/** The task's configs, in the order they were made. */
export async function listPush(
  engine: TaskEngine,
  tenant: string,
  taskId: string,
): Promise<TaskPushNotificationConfig[]> {
  const outcome = await engine.pushConfig(tenant, taskId);
  if (outcome.kind === 'notFound') throw notFound(taskId);
  return outcome.configs.map((config) => configOf(taskId, config));
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
