// Load generator, run as a child process of bench/run.mjs so that it never shares an event loop
// with the servers it measures. Takes one JSON argument, prints one JSON line with the result.
//
//   node bench/load-child.mjs '{"url":"http://127.0.0.1:3000/v1/jobs","connections":50,"duration":5}'
//
// Options: url, method, headers, body, connections, duration (s) or amount (requests),
// idsFile + pathTemplate ("/v1/jobs/{id}": each request takes the next id of the file, cyclically),
// idReplacement (autocannon's: every `[<id>]` in a request, e.g. in a header, becomes a fresh id).
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';

const options = JSON.parse(process.argv[2] ?? '{}');
const run = {
  url: options.url,
  method: options.method ?? 'GET',
  headers: options.headers ?? {},
  connections: options.connections ?? 50,
  pipelining: 1,
  timeout: options.timeoutS ?? 10,
};
if (options.body !== undefined) run.body = options.body;
if (options.idReplacement) run.idReplacement = true;
if (options.amount) run.amount = options.amount;
else run.duration = options.duration ?? 5;
if (options.idsFile) {
  const ids = readFileSync(options.idsFile, 'utf8').split('\n').filter(Boolean);
  let next = 0;
  run.requests = [
    {
      setupRequest: (req) => {
        req.path = options.pathTemplate.replace('{id}', ids[next++ % ids.length]);
        return req;
      },
    },
  ];
}

const result = await autocannon(run);
const seconds = (result.finish - result.start) / 1000 || result.duration;
process.stdout.write(
  JSON.stringify({
    total: result.requests.total,
    sent: result.requests.sent,
    seconds,
    rps: result.requests.total / seconds,
    latency: {
      mean: result.latency.mean,
      p50: result.latency.p50,
      p90: result.latency.p90,
      p99: result.latency.p99,
      max: result.latency.max,
    },
    ok: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes: result.statusCodeStats,
  }) + '\n',
);
