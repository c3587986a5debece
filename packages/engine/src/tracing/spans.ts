import {
  context,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Link,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import { linkTo, parentContext, traceparentOf } from './tracer.js';

// The spans longrun records, named and attributed after OpenTelemetry's messaging semantic
// conventions (a task is a message, its queue the destination), plus longrun's own:
//
//   create <queue>    PRODUCER  a submit (parent: the request's `traceparent`, else the caller's)
//   process <queue>   CONSUMER  one run of the task (parent: its create; a retry links the run
//                               before it); the queue wait is the gap between the two
//   POST <host>       CLIENT    one webhook delivery (parent: the create), `traceparent` sent

/** Attribute names (semantic conventions' and longrun's). */
export const ATTR = {
  system: 'messaging.system',
  operationType: 'messaging.operation.type',
  operationName: 'messaging.operation.name',
  destination: 'messaging.destination.name',
  messageId: 'messaging.message.id',
  taskId: 'longrun.task.id',
  jobType: 'longrun.job_type',
  tenant: 'longrun.tenant',
  outcome: 'longrun.outcome',
  attempt: 'longrun.attempt',
  queueWaitMs: 'longrun.queue_wait_ms',
  eventId: 'longrun.event.id',
} as const;

/** `messaging.system`: longrun is the messaging system its users see (over BullMQ). */
export const MESSAGING_SYSTEM = 'longrun';

/** A submit's span, from the request until the create's answer. */
export interface SubmitSpan {
  /** Names the task and its queue; answers the `traceparent` the task keeps. */
  task(id: string, type: string, queue: string): string;
}

/**
 * Runs a submit inside its `create` span (kind PRODUCER), whose parent is the request's
 * `traceparent` when it sent a valid one. The span ends with the submit's outcome kind.
 */
export async function traceSubmit<T extends { kind: string }>(
  tracer: Tracer,
  traceparent: string | undefined,
  tenant: string,
  submit: (span: SubmitSpan) => Promise<T>,
): Promise<T> {
  const span = tracer.startSpan(
    'create',
    {
      kind: SpanKind.PRODUCER,
      attributes: {
        [ATTR.system]: MESSAGING_SYSTEM,
        [ATTR.operationType]: 'create',
        [ATTR.operationName]: 'create',
        [ATTR.tenant]: tenant,
      },
    },
    parentContext(traceparent),
  );
  const named: SubmitSpan = {
    task(id, type, queue) {
      span.updateName(`create ${queue}`);
      span.setAttributes({
        [ATTR.destination]: queue,
        [ATTR.messageId]: id,
        [ATTR.taskId]: id,
        [ATTR.jobType]: type,
      });
      return traceparentOf(span);
    },
  };
  try {
    // Not made the active span: nothing under it needs it (its parent is given, not looked up),
    // and entering a context would turn on Node's promise hooks (AsyncLocalStorage) for every
    // request the API serves (bench/analysis.md, issue 30).
    const outcome = await submit(named);
    span.setAttribute(ATTR.outcome, outcome.kind);
    return outcome;
  } catch (error) {
    failed(span, error);
    throw error;
  } finally {
    span.end();
  }
}

/** What a run's span is made from. */
export interface RunSpanFacts {
  taskId: string;
  type: string;
  queue: string;
  attempt: number;
  /** When the run began (ms since the epoch): the span covers taking the task too. */
  startedAt: number;
  /** The task's create span (`traceparent`), the parent. */
  parent?: string | undefined;
  /** The run before it, when it failed and this is its retry: linked. */
  previousRun?: string | undefined;
  /** How long a first run's job waited in the queue (ms). */
  queueWaitMs?: number | undefined;
}

/** A run's `process` span (kind CONSUMER): a child of the task's create, a retry linked back. */
export function startRunSpan(tracer: Tracer, facts: RunSpanFacts): Span {
  const attributes: Attributes = {
    [ATTR.system]: MESSAGING_SYSTEM,
    [ATTR.operationType]: 'process',
    [ATTR.operationName]: 'process',
    [ATTR.destination]: facts.queue,
    [ATTR.messageId]: facts.taskId,
    [ATTR.taskId]: facts.taskId,
    [ATTR.jobType]: facts.type,
    [ATTR.attempt]: facts.attempt,
  };
  if (facts.queueWaitMs !== undefined) attributes[ATTR.queueWaitMs] = facts.queueWaitMs;
  const previous = linkTo(facts.previousRun);
  const links: Link[] = previous
    ? [{ context: previous, attributes: { 'longrun.link': 'previous_attempt' } }]
    : [];
  return tracer.startSpan(
    `process ${facts.queue}`,
    { kind: SpanKind.CONSUMER, attributes, links, startTime: facts.startedAt },
    parentContext(facts.parent),
  );
}

/**
 * Runs `run` inside a new run span (see `startRunSpan`), noting the span's `traceparent` on the
 * task so that a retry can link back to it. The caller ends the span (`endRunSpan`) once the
 * run's outcome is known, which for a completion is after `run` returned.
 */
export function traceRun<T>(
  tracer: Tracer,
  facts: RunSpanFacts,
  task: { runTrace?: string | undefined },
  run: (span: Span) => Promise<T>,
): Promise<T> {
  const span = startRunSpan(tracer, facts);
  task.runTrace = traceparentOf(span);
  return context.with(trace.setSpan(context.active(), span), () => run(span));
}

/** Ends a run's span with its outcome; a failed or retried run's span is an error. */
export function endRunSpan(span: Span, outcome: string, error?: unknown): void {
  span.setAttribute(ATTR.outcome, outcome);
  if (outcome === 'failed' || outcome === 'retrying') failed(span, error);
  span.end();
}

/**
 * Runs one webhook delivery inside its span (kind CLIENT, a child of the task's create) and
 * gives `post` the header to send with it: the span's `traceparent`, so the
 * receiver's work joins the task's trace.
 */
export async function traceDelivery(
  tracer: Tracer,
  facts: { taskId: string; eventId: string; url: string; parent?: string | undefined },
  post: (traceHeaders: Record<string, string>) => Promise<number>,
): Promise<number> {
  let host = '';
  try {
    host = new URL(facts.url).host;
  } catch {
    // the policy refuses such a URL before this runs
  }
  const span = tracer.startSpan(
    `POST ${host}`,
    {
      kind: SpanKind.CLIENT,
      attributes: {
        'http.request.method': 'POST',
        'server.address': host,
        [ATTR.taskId]: facts.taskId,
        [ATTR.eventId]: facts.eventId,
      },
    },
    parentContext(facts.parent),
  );
  try {
    // The receiver is given the span explicitly; no context is entered (see traceSubmit).
    const status = await post({ traceparent: traceparentOf(span) });
    span.setAttribute('http.response.status_code', status);
    if (status < 200 || status >= 300) span.setStatus({ code: SpanStatusCode.ERROR });
    return status;
  } catch (error) {
    failed(span, error);
    throw error;
  } finally {
    span.end();
  }
}

function failed(span: Span, error: unknown): void {
  if (error instanceof Error) span.recordException(error);
  span.setStatus({
    code: SpanStatusCode.ERROR,
    ...(error instanceof Error ? { message: error.message } : {}),
  });
}
