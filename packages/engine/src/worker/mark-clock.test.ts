import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { MarkClock } from './mark-clock.js';

describe('MarkClock', () => {
  it('calls each entry once, no sooner than its delay, in the order they were queued', async () => {
    const clock = new MarkClock(40);
    const calls: [string, number][] = [];
    const t0 = Date.now();
    const entry = (name: string) => ({ due: () => calls.push([name, Date.now() - t0]) });
    clock.add(entry('a'));
    await sleep(15);
    clock.add(entry('b'));
    clock.add(entry('c'));
    expect(clock.size).toBe(3);
    await sleep(20);
    expect(calls.map(([n]) => n)).toEqual([]); // a is due at 40 ms
    await expect.poll(() => calls.length, { timeout: 1000, interval: 5 }).toBe(3);
    expect(calls.map(([n]) => n)).toEqual(['a', 'b', 'c']);
    expect(calls[0]![1]).toBeGreaterThanOrEqual(39);
    expect(calls[1]![1]).toBeGreaterThanOrEqual(15 + 39);
    expect(clock.size).toBe(0);
    // Queued again after it emptied: the clock starts again.
    clock.add(entry('d'));
    await expect.poll(() => calls.length, { timeout: 1000, interval: 5 }).toBe(4);
  });

  it('keeps its order over many entries, skips the cancelled ones, and compacts', async () => {
    const clock = new MarkClock(5);
    const seen: number[] = [];
    const tickets: number[] = [];
    for (let i = 0; i < 3000; i++) tickets.push(clock.add({ due: () => seen.push(i) }));
    for (let i = 0; i < 3000; i += 3) clock.cancel(tickets[i]!);
    await expect.poll(() => seen.length, { timeout: 2000, interval: 5 }).toBe(2000);
    expect(seen).toEqual(Array.from({ length: 3000 }, (_, i) => i).filter((i) => i % 3 !== 0));
    expect(clock.size).toBe(0);
    // Tickets stay valid across the clock emptying: a later entry is cancelled by its own.
    const late = clock.add({ due: () => seen.push(-1) });
    clock.cancel(tickets[1]!); // long gone: does nothing
    const later = clock.add({ due: () => seen.push(-2) });
    clock.cancel(late);
    await expect.poll(() => seen.length, { timeout: 1000, interval: 5 }).toBe(2001);
    expect(seen.at(-1)).toBe(-2);
    void later;
  });
});
