import type { PushOutcome } from '../task-messages.js';
import type { Shard } from './shard.js';

/**
 * The doors' side channels (`TaskMessages`), each call on the shard its task id names.
 */
export class EngineMessages {
  constructor(private readonly shardOf: (id: string) => Shard) {}

  push(tenant: string, id: string, message: string, max?: number): Promise<PushOutcome> {
    return this.shardOf(id).messages.push(tenant, id, message, max);
  }

  shift(tenant: string, id: string): Promise<string | null> {
    return this.shardOf(id).messages.shift(tenant, id);
  }

  drain(tenant: string, id: string): Promise<string[]> {
    return this.shardOf(id).messages.drain(tenant, id);
  }

  subscribe(id: string, listener: () => void): () => void {
    return this.shardOf(id).messages.subscribe(id, listener);
  }
}
