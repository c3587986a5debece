import { describe, expect, it } from 'vitest';
import { activeTracer, parseTraceparent, traceLogFields } from './tracer.js';

describe('parseTraceparent', () => {
  const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
  const spanId = '00f067aa0ba902b7';

  it('reads a W3C traceparent as a remote parent, sampled or not', () => {
    expect(parseTraceparent(`00-${traceId}-${spanId}-01`)).toEqual({
      traceId,
      spanId,
      traceFlags: 1,
      isRemote: true,
    });
    expect(parseTraceparent(`00-${traceId.toUpperCase()}-${spanId}-00`)?.traceFlags).toBe(0);
  });

  it('refuses what is not one, so a bad header starts a new trace', () => {
    for (const bad of [
      undefined,
      42,
      '',
      'not-a-traceparent',
      `00-${traceId}-${spanId}`,
      `ff-${traceId}-${spanId}-01`,
      `00-${'0'.repeat(32)}-${spanId}-01`,
      `00-${traceId}-${'0'.repeat(16)}-01`,
      `00-${traceId}x-${spanId}-01`,
      `00-${traceId}-${spanId}-01${'-x'.repeat(60)}`,
    ]) {
      expect(parseTraceparent(bad), String(bad)).toBeUndefined();
    }
  });
});

describe('without an OpenTelemetry SDK', () => {
  it('has no tracer and adds nothing to log lines', () => {
    expect(activeTracer()).toBeUndefined();
    expect(traceLogFields()).toEqual({});
  });
});
