import { DEFAULT_MAX_SCHEDULES, type HandleFields } from '@longrun/core';
import { Answers } from './answers.js';
import { DurableTasks } from './durable.js';
import { EngineMessages } from './engine-messages.js';
import type { SubmitOutcome, TickOutcome } from './outcomes.js';
import { Placement } from './placement.js';
import { PushConfigs } from './push-configs.js';
import { Replays } from './replay.js';
import { Schedules } from './schedules.js';
import { ShardSet } from './shard-set.js';
import type { SubmitOptions, TickOptions } from './submit.js';
import { TaskCalls } from './task-calls.js';
import type { TaskEngineOptions } from './task-engine-options.js';

/** The parts a `TaskEngine` delegates to, made and joined to each other in one place. */
export interface EngineWiring {
  shards: ShardSet;
  messages: EngineMessages;
  placement: Placement;
  durable: DurableTasks;
  calls: TaskCalls;
  answers: Answers;
  pushConfigs: PushConfigs;
  replays: Replays;
  schedules: Schedules;
}

/** What the parts ask back of the engine that holds them. */
export interface EngineHost {
  redis<T>(operation: () => Promise<T>): Promise<T>;
  /** The storage budget now (it may change while the engine runs). */
  budgetBytes(): number;
  submit(tenant: string, body: unknown, opts: SubmitOptions): Promise<SubmitOutcome>;
  submitTick(tenant: string, body: unknown, opts: TickOptions): Promise<TickOutcome>;
  minScheduleEveryMs: number;
}

/**
 * Makes the engine's parts from its options: the shards, then what places, reads, answers,
 * replays and schedules tasks on them. Parts that call each other (a durable task's cancel, a
 * cancelled child's parent) are joined through closures, so the order here does not matter to them.
 */
export function wireEngine(opts: TaskEngineOptions, host: EngineHost): EngineWiring {
  const redis = <T>(operation: () => Promise<T>) => host.redis(operation);
  const shardDeps = { ...opts, redis, heartbeatMs: opts.heartbeatMs ?? 15_000 };
  const shards = new ShardSet(opts.shards ?? 1, shardDeps);
  const caps = () => ({ maxOpenTasks: opts.maxOpenTasks, maxBytes: host.budgetBytes() });
  const placement = new Placement(shards, opts.types, caps, redis);
  const durable: DurableTasks = new DurableTasks({
    shards,
    redis,
    submit: (tenant, body, o) => placement.place(tenant, body, o),
    cancel: (tenant, id) => calls.cancel(tenant, id),
    budgetBytes: () => host.budgetBytes(),
    faults: opts.faults,
  });
  const cancelled = (tenant: string, view: HandleFields) => durable.cancelled(tenant, view);
  const calls = new TaskCalls({ shards, pollIntervalMs: opts.pollIntervalMs, redis, cancelled });
  return {
    shards,
    messages: new EngineMessages((id) => shards.of(id)),
    placement,
    durable,
    calls,
    answers: new Answers({
      shards,
      types: opts.types,
      redis,
      handle: (view) => calls.handle(view),
      logger: opts.logger,
    }),
    pushConfigs: new PushConfigs(shards, opts.webhookPolicy, redis),
    replays: new Replays({ shards, submit: (t, b, o) => host.submit(t, b, o), redis }),
    schedules: new Schedules({
      connection: opts.connection,
      prefix: opts.prefix,
      types: opts.types,
      maxTtlMs: opts.maxTtlMs,
      minEveryMs: host.minScheduleEveryMs,
      maxPerTenant: opts.maxSchedules ?? DEFAULT_MAX_SCHEDULES,
      redis,
      submit: (tenant, body, submitOpts) => host.submitTick(tenant, body, submitOpts),
      logger: opts.logger,
    }),
  };
}
