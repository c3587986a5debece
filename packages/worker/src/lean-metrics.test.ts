import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { LeanCounter, LeanHistogram } from './lean-metrics.js';

const BOUNDS = [0.005, 0.01, 0.5, 60];

describe('LeanCounter and LeanHistogram', () => {
  it("scrape as the same text as prom-client's own Counter and Histogram", async () => {
    const theirs = new Registry();
    const ours = new Registry();
    const counter = new Counter({
      name: 'c_total',
      help: 'runs',
      labelNames: ['type', 'outcome'],
      registers: [theirs],
    });
    const histogram = new Histogram({
      name: 'h_seconds',
      help: 'durations',
      labelNames: ['type'],
      buckets: BOUNDS,
      registers: [theirs],
    });
    const leanCounter = new LeanCounter('c_total', 'runs', ours);
    const leanHistogram = new LeanHistogram('h_seconds', 'durations', ours, BOUNDS);
    const runs: [string, string, number][] = [
      ['echo', 'completed', 0.001],
      ['echo', 'completed', 0.007],
      ['echo', 'failed', 0.3],
      ['sleep', 'completed', 4000], // over every bound: +Inf only
      ['echo', 'completed', 0.01], // on a bound: counted in it
    ];
    for (const [type, outcome, seconds] of runs) {
      counter.labels({ type, outcome }).inc();
      histogram.labels({ type }).observe(seconds);
      leanCounter.child({ type, outcome }).inc();
      leanHistogram.child({ type }).observe(seconds);
    }
    expect(await ours.metrics()).toBe(await theirs.metrics());
    expect(await ours.metrics()).toContain('h_seconds_bucket{le="0.01",type="echo"} 3');
  });
});
