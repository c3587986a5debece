// An OTLP/HTTP trace receiver on 127.0.0.1 for the tests: what a collector (Jaeger, Tempo, the
// OpenTelemetry Collector) would be. It keeps every span the processes export as OTLP JSON
// (`OTEL_EXPORTER_OTLP_PROTOCOL=http/json`), flattened, and the raw bodies of other encodings.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

type AnyValue = {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
};
type KeyValue = { key: string; value: AnyValue };

/** One span as exported, with its resource's and its own attributes as plain values. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: Record<string, string | number | boolean>;
  links: { traceId: string; spanId: string; attributes: Record<string, unknown> }[];
  /** OTLP's status code: 0 unset, 1 ok, 2 error. */
  status: number;
  service: string;
}

export interface OtlpReceiver {
  /** `http://127.0.0.1:<port>`: the value of `OTEL_EXPORTER_OTLP_ENDPOINT`. */
  endpoint: string;
  spans: ReceivedSpan[];
  /** Every request: its path, headers and raw body. */
  requests: { path: string; headers: IncomingHttpHeaders; body: Buffer }[];
  close(): Promise<void>;
}

function plain(attributes: KeyValue[] | undefined): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const { key, value } of attributes ?? []) {
    if (value.stringValue !== undefined) out[key] = value.stringValue;
    else if (value.intValue !== undefined) out[key] = Number(value.intValue);
    else if (value.boolValue !== undefined) out[key] = value.boolValue;
    else if (value.doubleValue !== undefined) out[key] = value.doubleValue;
  }
  return out;
}

interface ExportRequest {
  resourceSpans?: {
    resource?: { attributes?: KeyValue[] };
    scopeSpans?: {
      spans?: (Omit<ReceivedSpan, 'attributes' | 'links' | 'status' | 'service'> & {
        attributes?: KeyValue[];
        links?: { traceId: string; spanId: string; attributes?: KeyValue[] }[];
        status?: { code?: number };
      })[];
    }[];
  }[];
}

/** Starts a receiver answering every export `200 {}` (OTLP's success). */
export async function otlpReceiver(): Promise<OtlpReceiver> {
  const receiver: OtlpReceiver = {
    endpoint: '',
    spans: [],
    requests: [],
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      receiver.requests.push({ path: req.url ?? '', headers: req.headers, body });
      if (req.url === '/v1/traces' && req.headers['content-type']?.includes('json')) {
        const parsed = JSON.parse(body.toString('utf8')) as ExportRequest;
        for (const rs of parsed.resourceSpans ?? []) {
          const service = String(plain(rs.resource?.attributes)['service.name'] ?? '');
          for (const ss of rs.scopeSpans ?? []) {
            for (const span of ss.spans ?? []) {
              receiver.spans.push({
                ...span,
                parentSpanId: span.parentSpanId ?? '',
                attributes: plain(span.attributes),
                links: (span.links ?? []).map((l) => ({ ...l, attributes: plain(l.attributes) })),
                status: span.status?.code ?? 0,
                service,
              });
            }
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  receiver.endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return receiver;
}
