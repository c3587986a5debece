// A local OTLP/HTTP sink for the tracing benchmarks (issue 30): takes every export on 127.0.0.1,
// answers `200 {}` as a collector does, and counts what it got; prints the counts on SIGTERM or
// SIGINT. It stands for Jaeger, Tempo or an OpenTelemetry Collector without their own cost.
//
//   node bench/otlp-sink.mjs [--port=4318]
//   OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 node apps/api/dist/main.js
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { port: { type: 'string', default: '4318' } } });
let requests = 0;
let bytes = 0;
const server = createServer((req, res) => {
  req.on('data', (chunk) => (bytes += chunk.length));
  req.on('end', () => {
    requests += 1;
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
});
server.listen(Number(values.port), '127.0.0.1', () => {
  console.log(JSON.stringify({ msg: 'sink ready', port: server.address().port }));
});
const stop = () => {
  console.log(JSON.stringify({ msg: 'sink stopped', requests, bytes }));
  server.close();
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
