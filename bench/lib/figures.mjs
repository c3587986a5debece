// The table: every figure with its ceiling, ratio, goal and verdict, from the run's measurements.
import { C } from './config.mjs';
import { perRequest } from './http-figures.mjs';
import { tripsText } from './monitor.mjs';
import { httpWorkerRows } from './http-worker.mjs';
import { proxyRows } from './proxy.mjs';
import { median, ms, num } from './report.mjs';

const med = (xs, f) => median(xs.map(f));
/** Median of the per-round ratios: each pair was measured back to back. */
const pairRatio = (as, bs, f) => median(as.map((a, i) => f(a) / f(bs[i])));
const rps = (xs) => num(med(xs, (r) => r.rps));
const rate = (xs) => med(xs, (r) => r.rate);

/** One row; `key` names the figure across runs (bench/baseline.json), whatever sizes `name` says. */
const row = (key, id, name, value, ceiling, ratio, goal, pass) => ({
  key,
  id,
  name,
  value,
  ceiling,
  ratio,
  goal,
  pass,
});

/** CPU per request (or job): ratio = reference ÷ longrun, comparable to a throughput ratio. */
function cpuRow(key, id, name, as, bs, refName) {
  const rd = (x) => (Number.isFinite(x) ? ` + Redis ${num(x)}` : '');
  const a = `${num(med(as, (r) => r.cpuUs))} µs${rd(med(as, (r) => r.redisUs))}`;
  const b = `${refName} ${num(med(bs, (r) => r.cpuUs))} µs${rd(med(bs, (r) => r.redisUs))}`;
  return row(
    key,
    id,
    name,
    a,
    b,
    pairRatio(bs, as, (x) => x.cpuUs),
    'info',
    null,
  );
}

function submitRows({ submit }) {
  const ratio = pairRatio(submit.api, submit.bare, (r) => r.rps);
  const p = (xs, q) => med(xs, (r) => r.latency[q]);
  const p99 = p(submit.api, 'p99');
  return [
    row(
      'submit.rps',
      '1',
      'submit POST /v1/jobs, 50 conns (req/s)',
      rps(submit.api),
      `bare Express ${rps(submit.bare)}`,
      ratio,
      '≥ 0.60×',
      ratio >= 0.6,
    ),
    cpuRow(
      'submit.cpu',
      '1',
      'submit: CPU per request, API process',
      submit.api,
      submit.bare,
      'bare',
    ),
    row(
      'submit.latency',
      '1',
      'submit latency p50 / p99',
      `${p(submit.api, 'p50')} / ${p99} ms`,
      `bare ${p(submit.bare, 'p50')} / ${p(submit.bare, 'p99')} ms`,
      undefined,
      'p99 ≤ 25 ms',
      p99 <= 25,
    ),
  ];
}

function pollRows(d) {
  const small = num(d.storedSmall);
  const big = num(d.storedBig);
  const rows = [
    ['poll.small', small, d.pollSmall],
    ['poll.big', big, d.pollBig],
  ].map(([key, label, runs]) => {
    const ratio = pairRatio(runs.api, runs.bare, (x) => x.rps);
    return row(
      key,
      '2',
      `poll GET /v1/jobs/:id, ${label} stored (req/s)`,
      rps(runs.api),
      `bare Express ${rps(runs.bare)}`,
      ratio,
      '≥ 0.70×',
      ratio >= 0.7,
    );
  });
  rows.push(
    cpuRow(
      'poll.cpu',
      '2',
      `poll: CPU per request, API process, ${big} stored`,
      d.pollBig.api,
      d.pollBig.bare,
      'bare',
    ),
  );
  const tSmall = med(d.pollSmall.api, perRequest);
  const tBig = med(d.pollBig.api, perRequest);
  const flat = Math.max(tSmall, tBig) <= 2 && Math.abs(tBig - tSmall) < 0.05;
  rows.push(
    row(
      'poll.commands',
      '2',
      'Redis commands per poll (commandstats)',
      `${tSmall.toFixed(2)} @ ${small} · ${tBig.toFixed(2)} @ ${big}`,
      `MONITOR: ${tripsText(d.trips.poll)}`,
      undefined,
      '≤ 2, constant',
      flat,
    ),
  );
  const l = (runs, q) => med(runs.latency, (r) => r[q]);
  rows.push(
    row(
      'poll.latency',
      '2',
      'poll latency p50, 1 connection',
      `${ms(l(d.pollSmall, 'p50'))} @ ${small} · ${ms(l(d.pollBig, 'p50'))} @ ${big}`,
      `p99 ${ms(l(d.pollSmall, 'p99'))} · ${ms(l(d.pollBig, 'p99'))}`,
      l(d.pollBig, 'p50') / l(d.pollSmall, 'p50'),
      'flat (info)',
      null,
    ),
  );
  return rows;
}

function processRows({ processRuns: pr }) {
  const ratio = pairRatio(pr.one, pr.raw, (r) => r.rate);
  const [info, rawInfo] = [pr.oneInfo[0].rate, pr.rawInfo[0].rate];
  return [
    row(
      'process.one',
      '3',
      `process ${num(C.processJobs)} echo jobs, 1 worker, conc. 100 (jobs/s)`,
      num(rate(pr.one)),
      `raw BullMQ Worker ${num(rate(pr.raw))}`,
      ratio,
      '≥ 0.70×',
      ratio >= 0.7,
    ),
    cpuRow('process.cpu', '3', 'process: CPU per job, worker process', pr.one, pr.raw, 'raw'),
    row(
      'process.two',
      '3',
      'process, 2 worker processes (jobs/s)',
      num(rate(pr.two)),
      `1 worker ${num(rate(pr.one))}`,
      rate(pr.two) / rate(pr.one),
      'scaling (info)',
      null,
    ),
    ...(pr.four?.length
      ? [
          row(
            'process.four',
            '3',
            'process, 4 worker processes (jobs/s)',
            num(rate(pr.four)),
            `1 worker ${num(rate(pr.one))}`,
            rate(pr.four) / rate(pr.one),
            'scaling (info)',
            null,
          ),
        ]
      : []),
    row(
      'process.info',
      '3',
      'process, 1 worker at LOG_LEVEL=info (jobs/s)',
      num(info),
      `raw BullMQ Worker ${num(rawInfo)}`,
      info / rawInfo,
      'info',
      null,
    ),
  ];
}

function otherRows(d) {
  const addRate = median(d.rawAdds);
  const scrape = pairRatio(d.scrape.big, d.scrape.empty, (r) => r.p50);
  const m = d.memory;
  const memory = m.longrun.perTask / m.raw.perJob;
  const c = d.cancel;
  return [
    row(
      'raw.add',
      '4',
      'raw BullMQ queue.add, 100 in flight (adds/s)',
      '',
      num(addRate),
      med(d.submit.api, (r) => r.rps) / addRate,
      'submit ÷ add (info)',
      null,
    ),
    row(
      'raw.set',
      '4',
      'redis-benchmark -t set (req/s)',
      '',
      num(median(d.setRates)),
      undefined,
      'context',
      null,
    ),
    row(
      'scrape',
      '5',
      `scrape /metrics p50, ${num(d.storedBig)} vs 0 stored`,
      ms(med(d.scrape.big, (r) => r.p50)),
      `0 stored ${ms(med(d.scrape.empty, (r) => r.p50))}`,
      scrape,
      '≤ 1.50×',
      scrape <= 1.5,
    ),
    row(
      'memory',
      '6',
      'Redis bytes per retained completed task',
      `${num(m.longrun.perTask)} B`,
      `raw BullMQ job ${num(m.raw.perJob)} B`,
      memory,
      '≤ 2.00×',
      memory <= 2,
    ),
    row(
      'cancel.answer',
      '7',
      `cancel running sleep job: answer p50 / p99 (${c.n})`,
      `${ms(c.answer.p50)} / ${ms(c.answer.p99)}`,
      '',
      undefined,
      'p99 ≤ 1 s',
      c.answer.p99 <= 1000,
    ),
    row(
      'cancel.aborted',
      '7',
      'cancel → handler aborted p50 / p99',
      `${ms(c.aborted.p50)} / ${ms(c.aborted.p99)}`,
      c.missing ? `${c.missing} never aborted` : '',
      undefined,
      'p99 ≤ 1 s',
      c.aborted.p99 <= 1000 && c.missing === 0,
    ),
  ];
}

/** Every row of the table, in the order. */
export function figures(d) {
  return [
    ...submitRows(d),
    ...pollRows(d),
    ...processRows(d),
    ...otherRows(d),
    ...(d.proxy ? proxyRows(d.proxy) : []),
    ...(d.httpWorker ? httpWorkerRows(d.httpWorker) : []),
  ];
}
