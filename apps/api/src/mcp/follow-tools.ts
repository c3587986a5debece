import { z } from 'zod';
import { taskStatusSchema, type TaskHandle } from '@longrun/core';
import type { FieldError, TaskEngine } from '@longrun/engine';
import { FOLLOW, followView, handleResult } from './follow-views.js';
import { followTask } from './task-follow.js';
import type { ToolResult } from './task-views.js';

/**
 * The follow tools: how a client without MCP Tasks follows the handle a long tool answered
 * (issue 32). Listed to every client of both generations, beside the job types (whose names may
 * not start with `longrun_`); each acts for the caller's tenant only, through the engine, so any
 * replica answers any call. A mistake the model can correct (a bad argument, an unknown id, an
 * answer its question refuses) is a tool error (`isError`) naming the field, not a protocol error.
 */

/** Longest `longrun_get_task` wait: below the minute after which many clients end a call. */
export const MAX_FOLLOW_WAIT_SECONDS = 50;

const taskId = z.string().min(1).max(100).describe('The taskId a tool answered');

const argsSchemas = {
  [FOLLOW.get]: z
    .strictObject({
      taskId,
      waitSeconds: z
        .int()
        .min(0)
        .max(MAX_FOLLOW_WAIT_SECONDS)
        .optional()
        .describe('Wait up to this long for the task to change status or finish (default 0)'),
    })
    .describe(
      'Reads a longrun task: its status, progress and status message, then its result or error, ' +
        'or the input it waits for. With waitSeconds it waits (at most 50 s) for the task to change ' +
        'status or finish before answering (a task waiting for input answers at once).',
    ),
  [FOLLOW.answer]: z
    .strictObject({
      taskId,
      input: z.unknown().describe("The answer, matching the task's inputRequest.schema"),
    })
    .describe(
      'Answers a longrun task that waits for input (status input_required): the input must match ' +
        'the JSON Schema of its inputRequest. The task then goes on.',
    ),
  [FOLLOW.cancel]: z
    .strictObject({ taskId })
    .describe('Cancels a longrun task that has not finished; its run stops wherever it is.'),
  [FOLLOW.list]: z
    .strictObject({
      status: taskStatusSchema.optional().describe('Only tasks in this status'),
      type: z.string().min(1).max(100).optional().describe('Only tasks of this tool'),
      cursor: z.string().min(1).max(200).optional().describe('nextCursor of the previous page'),
    })
    .describe("Lists this API key's longrun tasks, newest first, 20 a page."),
};

type FollowName = keyof typeof argsSchemas;

/** A follow tool as `tools/list` shows it. */
export interface FollowToolSpec {
  name: FollowName;
  description: string;
  inputSchema: Record<string, unknown>;
}

/** The four follow tools, as listed. */
export const FOLLOW_TOOLS: FollowToolSpec[] = Object.entries(argsSchemas).map(([name, schema]) => {
  const {
    $schema: _dialect,
    description,
    ...inputSchema
  } = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io: 'input',
  });
  return { name: name as FollowName, description: String(description), inputSchema };
});

/** Whether `name` is one of the follow tools. */
export function isFollowTool(name: string): name is FollowName {
  return Object.hasOwn(argsSchemas, name);
}

export interface FollowCallContext {
  /** Aborted when the client is gone (ends a wait). */
  signal: AbortSignal;
  /** Each handle seen while `longrun_get_task` waits (progress notifications). */
  onUpdate?: ((handle: TaskHandle) => void) | undefined;
}

/**
 * Runs a follow tool for `tenant`; always a tool result (errors are `isError`).
 * @example await callFollowTool(engine, 'acme', 'longrun_get_task', { taskId, waitSeconds: 30 }, ctx)
 */
export async function callFollowTool(
  engine: TaskEngine,
  tenant: string,
  name: FollowName,
  args: unknown,
  ctx: FollowCallContext,
): Promise<ToolResult> {
  const parsed = argsSchemas[name].safeParse(args ?? {});
  if (!parsed.success) {
    return toolError(
      'Invalid arguments',
      parsed.error.issues.map((i) => ({
        path: i.path.join('.') || '(arguments)',
        message: i.message,
      })),
    );
  }
  switch (name) {
    case FOLLOW.get: {
      const { taskId: id, waitSeconds = 0 } = parsed.data as {
        taskId: string;
        waitSeconds?: number;
      };
      const handle = await followTask(engine, tenant, id, {
        waitMs: waitSeconds * 1000,
        untilStatusChange: true,
        signal: ctx.signal,
        onUpdate: ctx.onUpdate,
      });
      return handle ? handleResult(handle) : notFound(id);
    }
    case FOLLOW.answer: {
      const { taskId: id, input } = parsed.data as { taskId: string; input?: unknown };
      const outcome = await engine.answer(tenant, id, { input });
      if (outcome.kind === 'answered') return handleResult(outcome.task);
      if (outcome.kind === 'notFound') return notFound(id);
      if (outcome.kind === 'invalid') {
        return toolError(`The answer was refused (${outcome.detail})`, outcome.errors, [
          `The task still waits: call ${FOLLOW.answer} again with a corrected input.`,
        ]);
      }
      return stale(engine, tenant, id, 'is not waiting for input');
    }
    case FOLLOW.cancel: {
      const { taskId: id } = parsed.data as { taskId: string };
      const outcome = await engine.cancel(tenant, id);
      if (outcome.kind === 'cancelled') return handleResult(outcome.task);
      if (outcome.kind === 'notFound') return notFound(id);
      return stale(engine, tenant, id, 'has already finished: nothing to cancel');
    }
    case FOLLOW.list: {
      const query = parsed.data as Record<string, string | undefined>;
      const outcome = await engine.list(tenant, defined(query));
      if (outcome.kind === 'invalid') return toolError('Invalid arguments', outcome.errors);
      const tasks = outcome.tasks.map(followView);
      const lines = tasks.map((t) => `${t.taskId} ${t.type} ${t.status}: ${t.statusMessage}`);
      const more = outcome.nextCursor ? `\nMore: pass cursor "${outcome.nextCursor}".` : '';
      return {
        content: [{ type: 'text', text: `${lines.join('\n') || 'No tasks.'}${more}` }],
        structuredContent: { tasks, nextCursor: outcome.nextCursor },
      };
    }
  }
}

/** The tool error for an id that is not the tenant's (one message, as the HTTP 404). */
function notFound(id: string): ToolResult {
  return {
    content: [
      {
        type: 'text',
        text: `Task ${id} not found: there is no such task for this API key (unknown, expired or another key's).`,
      },
    ],
    structuredContent: { error: { code: 'not-found', taskId: id } },
    isError: true,
  };
}

/** A task the call cannot act on any more: its state now, as an error. */
async function stale(engine: TaskEngine, tenant: string, id: string, why: string) {
  const found = await engine.get(tenant, id);
  if (found.kind !== 'found') return notFound(id);
  const view = followView(found.task);
  return {
    content: [{ type: 'text' as const, text: `Task ${id} ${why} (it is ${view.status}).` }],
    structuredContent: { ...view, error: { code: 'conflict', message: why } },
    isError: true,
  };
}

function toolError(title: string, errors: FieldError[], notes: string[] = []): ToolResult {
  const fields = errors.map((e) => `${e.path}: ${e.message}`).join('; ');
  return {
    content: [{ type: 'text', text: [`${title}: ${fields}`, ...notes].join('\n') }],
    structuredContent: { error: { message: title, errors } },
    isError: true,
  };
}

function defined(query: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(query).filter((e): e is [string, string] => e[1] !== undefined),
  );
}
