import type { ServerResponse } from 'node:http';
import { Problem } from '@longrun/core';
import type { LeaseBroker } from '@longrun/engine';
import { sendJson } from '../http/send-json.js';
import { finishProblem, invalid, parse, typeOwned } from './worker-problems.js';
import { leaseRequestSchema } from './worker.operations.js';

/**
 * `POST /v1/worker/leases` from either door (the Express route or the fast lane, decision 68):
 * validates the body, completes its `completions` (once its types are known good), each answered
 * as `…/complete` would be, then leases (long-polling up to `waitMs`) and answers. A client
 * going away ends the wait; a job taken after it goes back to its queue.
 */
export async function answerLeases(
  leases: LeaseBroker,
  worker: string,
  raw: unknown,
  res: ServerResponse,
): Promise<void> {
  const { completions, ...body } = parse(leaseRequestSchema, raw);
  const gone = new AbortController();
  res.on('close', () => gone.abort());
  const outcome = await leases.take(worker, body, gone.signal, completions);
  if (outcome.kind === 'unknownType') {
    throw invalid('A job type is not registered', [
      { path: 'types', message: `No job type "${outcome.name}" is registered` },
    ]);
  }
  if (outcome.kind === 'owned') throw typeOwned(outcome.name, 403);
  if (outcome.kind === 'stopping') {
    res.setHeader('Connection', 'close'); // the next call goes to a replica that is not stopping
    throw new Problem({
      status: 503,
      title: 'Service Unavailable',
      detail: 'This API process is stopping; lease again after Retry-After',
      code: 'stopping',
      retryAfter: 1,
    });
  }
  const completed = outcome.completions?.map((done, i) => {
    const { leaseId } = completions![i]!;
    return done.kind === 'ok'
      ? { leaseId, taskId: done.taskId, status: done.status }
      : { leaseId, problem: finishProblem(done).toJSON() };
  });
  res.setHeader('Cache-Control', 'no-store');
  sendJson(
    res,
    completed ? { leases: outcome.leases, completions: completed } : { leases: outcome.leases },
  );
}
