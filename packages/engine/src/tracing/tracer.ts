import {
  context,
  ROOT_CONTEXT,
  trace,
  TraceFlags,
  type Context,
  type Span,
  type SpanContext,
  type Tracer,
  type TracerProvider,
} from '@opentelemetry/api';

// longrun's side of OpenTelemetry (decision 65): the engine, the worker SDK and the doors use
// only `@opentelemetry/api`. Nothing is traced until an SDK registers a tracer provider (the
// apps do when the standard `OTEL_*` variables ask for it, or a user's own code does); until
// then `activeTracer()` answers `undefined` and no span object is made at all.

const TRACER_NAME = 'longrun';

let tracer: Tracer | undefined;

/**
 * The tracer to record longrun's spans with, or `undefined` while no OpenTelemetry SDK is
 * registered (the API's global is then a proxy with nothing behind it). Cheap enough to ask on
 * every submit and run: two property reads until an SDK appears, one after.
 * @example const tracer = activeTracer(); if (tracer) tracer.startSpan('x').end();
 */
export function activeTracer(): Tracer | undefined {
  if (tracer) return tracer;
  const provider: TracerProvider & { getDelegateTracer?: (name: string) => Tracer | undefined } =
    trace.getTracerProvider();
  // The API's proxy answers a tracer of the registered SDK, or none while there is none.
  if (typeof provider.getDelegateTracer === 'function') {
    if (!provider.getDelegateTracer(TRACER_NAME)) return undefined;
  }
  tracer = provider.getTracer(TRACER_NAME);
  return tracer;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/**
 * A W3C `traceparent` (`00-<trace id>-<span id>-<flags>`) as a remote span context, or
 * `undefined` when it is not one (malformed, all-zero ids, version `ff`): a bad header starts a
 * new trace rather than failing the request, as the W3C recommendation says.
 * @example parseTraceparent('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01')?.traceId
 */
export function parseTraceparent(value: unknown): SpanContext | undefined {
  if (typeof value !== 'string' || value.length > 100) return undefined;
  const match = TRACEPARENT.exec(value.trim().toLowerCase());
  if (!match) return undefined;
  const [, version, traceId = '', spanId = '', flags = '00'] = match;
  if (version === 'ff' || /^0+$/.test(traceId) || /^0+$/.test(spanId)) return undefined;
  return { traceId, spanId, traceFlags: parseInt(flags, 16) & 0xff, isRemote: true };
}

/** The context whose parent span is `traceparent`'s; else the active one (the caller's span). */
export function parentContext(traceparent: string | undefined): Context {
  const remote = traceparent ? parseTraceparent(traceparent) : undefined;
  return remote ? trace.setSpanContext(ROOT_CONTEXT, remote) : context.active();
}

/** A span's own W3C `traceparent`, to store with a task or send to a receiver. */
export function traceparentOf(span: Span): string {
  const { traceId, spanId, traceFlags } = span.spanContext();
  return `00-${traceId}-${spanId}-${traceFlags & TraceFlags.SAMPLED ? '01' : '00'}`;
}

/** The span context of a stored `traceparent`, for a span link (`undefined`: none or bad). */
export function linkTo(traceparent: string | undefined): SpanContext | undefined {
  return traceparent ? parseTraceparent(traceparent) : undefined;
}

/**
 * pino's `mixin`: `trace_id` and `span_id` of the span active where a line is logged, so a log
 * line can be found from its trace and back. Nothing (one context read) without an SDK.
 */
export function traceLogFields(): Record<string, string> {
  if (!tracer) return {};
  const span = trace.getSpan(context.active());
  if (!span) return {};
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}
