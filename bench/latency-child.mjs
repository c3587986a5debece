// Sequential latency probe (one connection, one request at a time, keep-alive), run as a child of
// bench/run.mjs. autocannon's histogram rounds to whole milliseconds; this one does not.
// Takes one JSON argument, prints one JSON line {count, mean, p50, p90, p99, max, statusCodes}.
//
//   node bench/latency-child.mjs '{"url":"http://127.0.0.1:3000/metrics","duration":3}'
// Options: url, headers, duration (s), idsFile + pathTemplate (as in load-child.mjs).
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';

const options = JSON.parse(process.argv[2] ?? '{}');
const agent = new Agent({ keepAlive: true, maxSockets: 1 });
const base = new URL(options.url);
const ids = options.idsFile
  ? readFileSync(options.idsFile, 'utf8').split('\n').filter(Boolean)
  : [];

const get = (path) =>
  new Promise((resolve, reject) => {
    const req = request(
      { host: base.hostname, port: base.port, path, agent, headers: options.headers ?? {} },
      (res) => {
        res.on('data', () => undefined);
        res.on('end', () => resolve(res.statusCode));
      },
    );
    req.setTimeout(10_000, () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });

const samples = [];
const statusCodes = {};
const until = performance.now() + (options.duration ?? 3) * 1000;
// One request first, unmeasured: it opens the connection.
await get(base.pathname);
for (let i = 0; performance.now() < until; i++) {
  const path = ids.length
    ? options.pathTemplate.replace('{id}', ids[i % ids.length])
    : base.pathname;
  const t0 = performance.now();
  const status = await get(path);
  samples.push(performance.now() - t0);
  statusCodes[status] = (statusCodes[status] ?? 0) + 1;
}
samples.sort((a, b) => a - b);
const at = (q) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))];
console.log(
  JSON.stringify({
    count: samples.length,
    mean: samples.reduce((a, b) => a + b, 0) / samples.length,
    p50: at(0.5),
    p90: at(0.9),
    p99: at(0.99),
    max: samples[samples.length - 1],
    statusCodes,
  }),
);
agent.destroy();
