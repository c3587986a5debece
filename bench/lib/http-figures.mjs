// Figures 1, 2 and 5: submit and poll against the bare app, /metrics with and without tasks.
import { C } from './config.mjs';
import { checkLoad, ctx, loadWithCpu, poll, post, say, sum, warn } from './context.mjs';
import { callDelta, commandCalls } from './redis.mjs';
import { ms, num } from './report.mjs';
import { latency } from './services.mjs';

/** Commands per request of an API run whose Redis calls were counted. */
export const perRequest = (r) => sum(Object.values(r.calls)) / (r.sent || r.total);

/** Runs `fn` (a load on the API) and adds the INFO commandstats delta it caused as `calls`. */
async function counted(fn) {
  const before = await commandCalls(ctx.redis);
  const r = await fn();
  r.calls = callDelta(before, await commandCalls(ctx.redis));
  return r;
}

/** Submit rounds: the bare app, then the API, back to back. */
export async function submitRounds(api, bare) {
  const out = { api: [], bare: [] };
  for (let i = 0; i < C.rounds; i++) {
    const b = await loadWithCpu(bare, { ...post(bare), duration: C.loadS });
    out.bare.push(checkLoad('bare POST', b, '202'));
    const r = await counted(() => loadWithCpu(api, { ...post(api), duration: C.loadS }));
    out.api.push(checkLoad('api POST', r, '202'));
    say(
      `submit round ${i + 1}: api ${num(r.rps)} req/s p50 ${r.latency.p50} p99 ${r.latency.p99} ms; bare ${num(b.rps)} req/s`,
    );
  }
  return out;
}

/** Poll rounds over the ids in `file`: bare app, API (commands counted), then 1-connection latency. */
export async function pollRounds(api, bare, file, label) {
  const out = { api: [], bare: [], latency: [] };
  for (let i = 0; i < C.rounds; i++) {
    out.bare.push(await loadWithCpu(bare, poll(bare, file, { duration: C.loadS })));
    const r = await counted(() => loadWithCpu(api, poll(api, file, { duration: C.loadS })));
    const ok = r.statusCodes?.['200']?.count ?? 0;
    if (ok !== r.total) {
      warn(`${label}: ${r.total} answers, ${ok} × 200: ${JSON.stringify(r.statusCodes)}`);
    }
    out.api.push(r);
    const probe = poll(api, file, { duration: C.pollLatencyS });
    out.latency.push(await latency(probe));
    say(
      `${label}, round ${i + 1}: api ${num(r.rps)} req/s, bare ${num(out.bare[i].rps)} req/s, ${perRequest(r).toFixed(2)} commands/poll, 1-conn p50 ${ms(out.latency[i].p50)}`,
    );
  }
  return out;
}

/** /metrics latency, one connection: the API holding many tasks, then one holding none. */
export async function scrapeRounds(apiFull, apiEmpty, stored) {
  const out = { big: [], empty: [] };
  for (let i = 0; i < C.rounds; i++) {
    out.big.push(await latency({ url: `${apiFull.base}/metrics`, duration: C.scrapeS }));
    out.empty.push(await latency({ url: `${apiEmpty.base}/metrics`, duration: C.scrapeS }));
  }
  say(
    `scrape p50: ${num(stored)} stored ${out.big.map((r) => ms(r.p50)).join(', ')}; 0 stored ${out.empty.map((r) => ms(r.p50)).join(', ')}`,
  );
  return out;
}
