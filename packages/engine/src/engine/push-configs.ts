import { isTaskId, MAX_PUSH_CONFIGS, pushTargetsOf } from '@longrun/core';
import type { WebhookTargetPolicy } from '../webhook-target.js';
import {
  notFound,
  type DeletePushConfigOutcome,
  type PushConfigOutcome,
  type SetPushConfigOutcome,
} from './outcomes.js';
import { pushTarget } from './push-config.js';
import type { ShardSet } from './shard-set.js';

/** A task's A2A push notification configs: read, set, removed (see `TaskEngine.setPushConfig`). */
export class PushConfigs {
  constructor(
    private readonly shards: ShardSet,
    private readonly policy: WebhookTargetPolicy,
    private readonly redis: <T>(operation: () => Promise<T>) => Promise<T>,
  ) {}

  async get(tenant: string, id: string): Promise<PushConfigOutcome> {
    if (!isTaskId(id)) return notFound;
    const stored = await this.redis(() => this.shards.of(id).store.callback(id));
    if (!stored || stored.tenant !== tenant) return notFound;
    return { kind: 'found', configs: pushTargetsOf(stored.callback) };
  }

  async set(tenant: string, id: string, body: unknown): Promise<SetPushConfigOutcome> {
    if (!isTaskId(id)) return notFound;
    const target = pushTarget(body, id, this.policy, '');
    if ('kind' in target) return target;
    const done = await this.redis(() =>
      this.shards.of(id).store.setPush(tenant, id, { set: target, max: MAX_PUSH_CONFIGS }),
    );
    if (done === 'ok') return { kind: 'set', config: target };
    if (done === 'missing' || done === 'absent') return notFound;
    if (done === 'callback') return { kind: 'hasCallback' };
    return { kind: 'pushFull', max: done.full };
  }

  async delete(tenant: string, id: string, configId: string): Promise<DeletePushConfigOutcome> {
    if (!isTaskId(id)) return notFound;
    const done = await this.redis(() =>
      this.shards.of(id).store.setPush(tenant, id, { remove: configId }),
    );
    if (done === 'missing') return notFound;
    return { kind: done === 'ok' ? 'deleted' : 'absent' };
  }
}
