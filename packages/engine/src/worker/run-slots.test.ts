import { describe, expect, it } from 'vitest';
import { RunSlots } from './run-slots.js';

describe('RunSlots', () => {
  it('lets at most its limit run, the others wait in order, and a release starts the next', async () => {
    const slots = new RunSlots(2);
    const started: number[] = [];
    const releases: (() => void)[] = [];
    const take = (n: number) =>
      slots.acquire().then((release) => {
        started.push(n);
        releases.push(release);
      });
    const all = [take(1), take(2), take(3), take(4)];
    await Promise.resolve();
    await Promise.resolve();
    expect(started).toEqual([1, 2]);
    expect([slots.active, slots.queued]).toEqual([2, 2]);
    releases[0]!();
    releases[0]!(); // a second call of one release frees nothing more
    await Promise.resolve();
    await Promise.resolve();
    expect(started).toEqual([1, 2, 3]);
    expect([slots.active, slots.queued]).toEqual([2, 1]);
    slots.setLimit(3);
    await Promise.all(all);
    expect(started).toEqual([1, 2, 3, 4]);
    expect(slots.active).toBe(3);
  });

  it('tryAcquire takes a free slot at once, and none while full or while others wait', async () => {
    const slots = new RunSlots(1);
    const first = slots.tryAcquire();
    expect(first).toBeTypeOf('function');
    expect(slots.tryAcquire()).toBeUndefined(); // full
    let waited = false;
    const waiting = slots.acquire().then((release) => {
      waited = true;
      return release;
    });
    first!();
    // The freed slot went to the one waiting, not to a later tryAcquire.
    expect(slots.tryAcquire()).toBeUndefined();
    const second = await waiting;
    expect(waited).toBe(true);
    second();
    expect(slots.active).toBe(0);
    expect(slots.tryAcquire()).toBeTypeOf('function');
  });

  it('refuses a limit below one', () => {
    expect(() => new RunSlots(0)).toThrow(/limit >= 1/);
    expect(() => new RunSlots(2).setLimit(0.5)).toThrow(/limit >= 1/);
  });
});
