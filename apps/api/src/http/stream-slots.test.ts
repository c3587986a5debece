import { describe, expect, it } from 'vitest';
import { defaultStreamLimits, openFileLimit, StreamSlots, streamLimits } from './stream-slots.js';

const limits = (soft: string) =>
  [
    'Limit                     Soft Limit           Hard Limit           Units',
    'Max processes             63704                63704                processes',
    `Max open files            ${soft}                 524288               files`,
  ].join('\n');

describe('stream slots', () => {
  it('counts per tenant and in all; a slot released twice is given back once', () => {
    const slots = new StreamSlots({ perTenant: 2, total: 3 });
    const a1 = slots.take('a');
    const a2 = slots.take('a');
    expect(slots.take('a')).toEqual({ refused: 'tenant' });
    const b1 = slots.take('b');
    expect(slots.take('b')).toEqual({ refused: 'total' });
    expect([slots.open('a'), slots.open('b'), slots.open()]).toEqual([2, 1, 3]);
    if ('refused' in a1 || 'refused' in a2 || 'refused' in b1) throw new Error('refused');
    a1.release();
    a1.release();
    expect([slots.open('a'), slots.open()]).toEqual([1, 2]);
    expect('release' in slots.take('a')).toBe(true);
    expect(slots.take('a')).toEqual({ refused: 'tenant' });
  });

  it('0 means no cap', () => {
    const slots = new StreamSlots({ perTenant: 0, total: 0 });
    for (let i = 0; i < 1000; i += 1) expect('release' in slots.take('a')).toBe(true);
  });

  it('defaults from the open-file limit: half for streams, a quarter of that per tenant (at most 100)', () => {
    expect(openFileLimit(() => limits('400'))).toBe(400);
    expect(openFileLimit(() => limits('unlimited'))).toBe(Number.MAX_SAFE_INTEGER);
    // Unreadable (not Linux) or odd: the usual soft default.
    expect(
      openFileLimit(() => {
        throw new Error('ENOENT');
      }),
    ).toBe(1024);
    expect(openFileLimit(() => 'nothing here')).toBe(1024);
    expect(defaultStreamLimits(400)).toEqual({ total: 200, perTenant: 50 });
    expect(defaultStreamLimits(1024)).toEqual({ total: 512, perTenant: 100 });
    expect(defaultStreamLimits(Number.MAX_SAFE_INTEGER)).toEqual({ total: 10_000, perTenant: 100 });
    expect(streamLimits({}, 400)).toEqual({ total: 200, perTenant: 50 });
    expect(streamLimits({ perTenant: 20 }, 400)).toEqual({ total: 200, perTenant: 20 });
    expect(streamLimits({ total: 40 }, 400)).toEqual({ total: 40, perTenant: 10 });
    expect(streamLimits({ total: 0 }, 400)).toEqual({ total: 0, perTenant: 100 });
  });
});
