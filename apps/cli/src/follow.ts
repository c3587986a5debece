import { isTerminal, type TaskHandle } from '@longrun/core';
import { LongrunError, type LongrunClient } from '@longrun/client';

/**
 * Follows a task until it is terminal or asks for input, reporting each change: over the event
 * stream (live), or by polling at the server's interval where the API has no `/events`.
 */
export async function follow(
  client: LongrunClient,
  id: string,
  opts: { signal: AbortSignal; onUpdate: (task: TaskHandle) => void },
): Promise<TaskHandle> {
  try {
    for await (const { task } of client.events(id, { signal: opts.signal })) {
      opts.onUpdate(task);
      if (isTerminal(task.status) || task.status === 'input_required') return task;
    }
  } catch (error) {
    const noRoute =
      error instanceof LongrunError && error.status === 404 && error.code === 'no-route';
    if (!noRoute) throw error;
  }
  return client.wait(id, { signal: opts.signal, onUpdate: opts.onUpdate });
}
