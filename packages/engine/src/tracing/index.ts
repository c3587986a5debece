export { activeTracer, parseTraceparent, traceLogFields, traceparentOf } from './tracer.js';
export {
  ATTR,
  endRunSpan,
  MESSAGING_SYSTEM,
  startRunSpan,
  traceDelivery,
  traceRun,
  traceSubmit,
  type RunSpanFacts,
  type SubmitSpan,
} from './spans.js';
