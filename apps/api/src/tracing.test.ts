import { ConfigError } from '@longrun/core';
import { describe, expect, it } from 'vitest';
import { startTracing, tracingAsked } from './tracing.js';

describe('tracingAsked', () => {
  it('follows the standard OTEL_* variables', () => {
    expect(tracingAsked({})).toBe(false);
    expect(tracingAsked({ OTEL_SERVICE_NAME: 'api' })).toBe(false);
    expect(tracingAsked({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).toBe(true);
    expect(
      tracingAsked({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces' }),
    ).toBe(true);
    expect(tracingAsked({ OTEL_TRACES_EXPORTER: 'otlp' })).toBe(true);
    expect(tracingAsked({ OTEL_TRACES_EXPORTER: 'console' })).toBe(true);
    expect(
      tracingAsked({
        OTEL_TRACES_EXPORTER: 'none',
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
      }),
    ).toBe(false);
    expect(tracingAsked({ OTEL_TRACES_EXPORTER: ' ', OTEL_EXPORTER_OTLP_ENDPOINT: '' })).toBe(
      false,
    );
    expect(
      tracingAsked({
        OTEL_SDK_DISABLED: 'true',
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
      }),
    ).toBe(false);
    expect(
      tracingAsked({
        OTEL_SDK_DISABLED: 'false',
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
      }),
    ).toBe(true);
  });
});

describe('startTracing', () => {
  it('registers nothing when not asked', async () => {
    expect(await startTracing('longrun-api', {})).toBeUndefined();
  });

  it('takes empty variables as unset, as compose passes them', () => {
    const empty = {
      OTEL_SDK_DISABLED: '',
      OTEL_TRACES_EXPORTER: '',
      OTEL_EXPORTER_OTLP_ENDPOINT: '',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '',
      OTEL_EXPORTER_OTLP_PROTOCOL: '',
      OTEL_SERVICE_NAME: '',
    };
    expect(tracingAsked(empty)).toBe(false);
  });

  it('refuses, before registering anything, what it cannot export with', async () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' };
    await expect(
      startTracing('longrun-api', { ...endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }),
    ).rejects.toThrow(ConfigError);
    await expect(startTracing('longrun-api', { OTEL_TRACES_EXPORTER: 'zipkin' })).rejects.toThrow(
      /OTEL_TRACES_EXPORTER: "zipkin" is not supported/,
    );
  });
});
