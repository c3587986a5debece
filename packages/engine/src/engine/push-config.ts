import { a2aPushConfigSchema, fieldErrors, type A2APushTarget } from '@longrun/core';
import type { WebhookTargetPolicy } from '../webhook-target.js';
import { invalid, type Invalid } from './outcomes.js';

/**
 * An A2A push notification config as the task `taskId` keeps it, or why it is refused: its shape
 * (`a2aPushConfigSchema`) and its URL, which the webhook target policy checks as it checks a
 * `callback` URL (no DNS, no connection; resolved addresses are checked again at every delivery).
 * An empty id becomes the task's id. `path` names the config in field errors ('' for the body).
 * @example pushTarget({ url: 'https://hooks.example.com/a2a' }, taskId, policy, '')
 */
export function pushTarget(
  body: unknown,
  taskId: string,
  policy: WebhookTargetPolicy,
  path: string,
): A2APushTarget | Invalid {
  const parsed = a2aPushConfigSchema.safeParse(body);
  if (!parsed.success) {
    return invalid(400, 'The push notification config is invalid', fieldErrors(parsed.error, path));
  }
  const { id, url, token, authentication } = parsed.data;
  const refused = policy.refuseUrl(url);
  if (refused) {
    return invalid(400, 'The push notification URL is not allowed', [
      { path: path ? `${path}.url` : 'url', message: `${refused} (see LONGRUN_WEBHOOK_ALLOW)` },
    ]);
  }
  return {
    format: 'a2a',
    id: id || taskId,
    url,
    ...(token ? { token } : {}),
    ...(authentication ? { authentication } : {}),
  };
}
