import type { SpanExporter } from '@opentelemetry/sdk-trace-node';
import { ConfigError } from '@longrun/core';

// OpenTelemetry tracing for this process (decision 65), on when the standard variables ask for
// it. The SDK is imported only then: a process without them loads none of it and records no
// span (the engine asks `@opentelemetry/api`, which answers no tracer). The stock worker has the
// same module (apps/worker/src/tracing.ts): apps share no code.

/**
 * The OpenTelemetry variables an operator sets most, as docker-compose.yml and .env.example pass
 * them (empty: unset); read here or by the SDK's packages, which take the other standard ones
 * (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `OTEL_BSP_*`, …) from the environment too.
 */
export const OTEL_SETTINGS = {
  OTEL_SDK_DISABLED: 'true: no tracing, whatever else is set',
  OTEL_TRACES_EXPORTER: 'otlp (default), console or none',
  OTEL_EXPORTER_OTLP_ENDPOINT: "the collector's OTLP/HTTP base URL: setting it turns tracing on",
  OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf (default) or http/json',
  OTEL_EXPORTER_OTLP_HEADERS: 'headers for the collector',
  OTEL_SERVICE_NAME: 'the service name (default longrun-api, longrun-worker)',
  OTEL_RESOURCE_ATTRIBUTES: 'more resource attributes',
  OTEL_TRACES_SAMPLER: 'the sampler (default parentbased_always_on)',
  OTEL_TRACES_SAMPLER_ARG: "the sampler's argument",
} as const;

/** Environment variables read here (OpenTelemetry's own names). */
type Env = Record<string, string | undefined>;

/** What a process keeps of its tracing: call `shutdown` before exit to send the last spans. */
export interface Tracing {
  exporters: string[];
  shutdown(): Promise<void>;
}

/** Whether the OpenTelemetry variables ask this process to trace. */
export function tracingAsked(env: Env): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporters = exporterNames(env);
  if (exporters) return exporters.some((name) => name !== 'none');
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

function exporterNames(env: Env): string[] | undefined {
  const list = env.OTEL_TRACES_EXPORTER?.split(',')
    .map((name) => name.trim().toLowerCase())
    .filter(Boolean);
  return list && list.length > 0 ? list : undefined;
}

/**
 * Registers the OpenTelemetry Node tracer provider when the variables ask for it
 * (`OTEL_TRACES_EXPORTER`, `OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`;
 * never with `OTEL_SDK_DISABLED=true`), exporting with OTLP over HTTP (`http/protobuf`, or
 * `http/json` by `OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL`) or to the console. The exporter, the
 * batch processor and the sampler read their own variables (endpoint, headers, `OTEL_BSP_*`,
 * `OTEL_TRACES_SAMPLER`); `OTEL_SERVICE_NAME` names the service (default: `serviceName`).
 * @example const tracing = await startTracing('longrun-api', process.env);
 */
export async function startTracing(serviceName: string, env: Env): Promise<Tracing | undefined> {
  if (!tracingAsked(env)) return undefined;
  const names = (exporterNames(env) ?? ['otlp']).filter((name) => name !== 'none');
  const [sdk, resources] = await Promise.all([
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/resources'),
  ]);
  const exporters: SpanExporter[] = [];
  for (const name of names) {
    if (name === 'console') exporters.push(new sdk.ConsoleSpanExporter());
    else if (name === 'otlp') exporters.push(await otlpExporter(env));
    // Variables that ask for what this process cannot do: it does not start (ConfigError).
    else
      throw new ConfigError(
        `OTEL_TRACES_EXPORTER: "${name}" is not supported here (otlp, console or none)`,
      );
  }
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (the env detector) win over the default name.
  const resource = resources
    .resourceFromAttributes({ 'service.name': serviceName })
    .merge(resources.detectResources({ detectors: [resources.envDetector] }));
  const provider = new sdk.NodeTracerProvider({
    resource,
    spanProcessors: exporters.map((exporter) => new sdk.BatchSpanProcessor(exporter)),
  });
  provider.register();
  return { exporters: names, shutdown: () => provider.shutdown() };
}

async function otlpExporter(env: Env): Promise<SpanExporter> {
  // Empty means unset (compose passes every variable, set or not).
  const protocol =
    [env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, env.OTEL_EXPORTER_OTLP_PROTOCOL]
      .map((value) => value?.trim())
      .find(Boolean) ?? 'http/protobuf';
  if (protocol === 'http/json') {
    const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
    return new OTLPTraceExporter();
  }
  if (protocol === 'http/protobuf') {
    const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-proto');
    return new OTLPTraceExporter();
  }
  throw new ConfigError(
    `OTEL_EXPORTER_OTLP_PROTOCOL: "${protocol}" is not supported here: use http/protobuf (a collector's port 4318) or http/json`,
  );
}
