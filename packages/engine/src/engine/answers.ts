import { randomUUID } from 'node:crypto';
import {
  fieldErrors,
  inputResponseRequestSchema,
  isTaskId,
  type HandleFields,
  type TaskHandle,
} from '@longrun/core';
import type { JobTypeDirectory } from '../registry/job-type-directory.js';
import type { TaskWorkerLogger } from '../worker/job-data.js';
import { InputValidator } from './answer-validator.js';
import { conflict, invalid, notFound, type AnswerOutcome } from './outcomes.js';
import type { ShardSet } from './shard-set.js';

/** What answering needs of the engine. */
export interface AnswerDeps {
  shards: ShardSet;
  types: JobTypeDirectory;
  redis<T>(operation: () => Promise<T>): Promise<T>;
  handle(view: HandleFields): TaskHandle;
  logger?: TaskWorkerLogger | undefined;
}

/** Answers to `input_required` tasks: checked against the question, recorded, the job woken. */
export class Answers {
  private readonly validator: InputValidator;

  constructor(private readonly deps: AnswerDeps) {
    this.validator = new InputValidator(deps.logger);
  }

  /** See `TaskEngine.answer`. */
  async answer(tenant: string, id: string, body: unknown): Promise<AnswerOutcome> {
    if (!isTaskId(id)) return notFound;
    const { redis, shards } = this.deps;
    const read = await redis(() => shards.of(id).store.peekAt(id));
    if (!read || read.view.tenant !== tenant) return notFound;
    const { view, seq } = read;
    if (view.status !== 'input_required' || !view.inputRequest) {
      return conflict('notAwaitingInput', view.status);
    }
    const parsed = inputResponseRequestSchema.safeParse(body);
    if (!parsed.success)
      return invalid(400, 'The request body is invalid', fieldErrors(parsed.error));
    if (!('input' in parsed.data)) {
      return invalid(400, 'The request body is invalid', [{ path: 'input', message: 'Required' }]);
    }
    const problems = this.validator.validate(view.inputRequest.schema, parsed.data.input);
    if (problems.length > 0)
      return invalid(422, 'The input does not match inputRequest.schema', problems);
    const done = await redis(() =>
      shards
        .of(id)
        .store.transition(
          id,
          'answer',
          { awaitingInput: false, inputRequest: null },
          { appendInput: parsed.data.input, ifSeq: seq, op: randomUUID() },
        ),
    );
    if (!done.ok) {
      if (done.reason === 'missing') return notFound;
      return conflict(
        done.reason === 'changed' ? 'questionChanged' : 'notAwaitingInput',
        done.current,
      );
    }
    const wake = await this.wake(view);
    const { inputRequest: _answered, ...rest } = view;
    const answered = { ...rest, status: 'working' as const, statusMessage: 'input received' };
    const task = this.deps.handle({ ...answered, updatedAt: Date.now() });
    return { kind: 'answered', task, wake };
  }

  /** Wakes an answered task's job; a failed wake-up is left to the reconciler, and said so. */
  private async wake(view: HandleFields): Promise<'woken' | 'requeued' | 'deferred'> {
    const definition = this.deps.types.get(view.type);
    if (!definition) return 'deferred';
    const { redis } = this.deps;
    try {
      const { store, jobs } = this.deps.shards.of(view.id);
      const priority = await redis(() => store.priority(view.id));
      return await redis(() => jobs.wake({ ...view, priority }, definition));
    } catch (err) {
      this.deps.logger?.warn({ err, taskId: view.id }, 'answer recorded; waking its job failed');
      return 'deferred';
    }
  }
}
