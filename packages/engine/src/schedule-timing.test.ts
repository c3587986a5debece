import { describe, expect, it } from 'vitest';
import { checkScheduleTiming } from './schedule-timing.js';

describe('checkScheduleTiming', () => {
  it('accepts a cron whose runs are at least the minimum apart, in UTC or a named zone', () => {
    expect(checkScheduleTiming({ cron: '*/15 * * * *' }, 60_000)).toEqual([]);
    expect(checkScheduleTiming({ cron: '0 9 * * 1-5', tz: 'Europe/Paris' }, 60_000)).toEqual([]);
    expect(checkScheduleTiming({ cron: '* * * * * *' }, 1000)).toEqual([]);
    expect(checkScheduleTiming({ cron: '@hourly' }, 1000)).toEqual([]);
    expect(checkScheduleTiming({}, 1000)).toEqual([]);
  });

  it('refuses runs closer than the minimum, even when only some of them are', () => {
    const [every30s] = checkScheduleTiming({ cron: '*/30 * * * * *' }, 60_000);
    expect(every30s).toEqual({
      path: 'cron',
      message: 'runs 30000 ms apart; schedules may run at most every 60000 ms',
    });
    // Two runs a second apart each minute: the minute between them does not hide it.
    expect(checkScheduleTiming({ cron: '0,1 * * * * *' }, 2000)).toHaveLength(1);
  });

  it('refuses what does not parse, never runs, or names no time zone', () => {
    expect(checkScheduleTiming({ cron: 'every day' }, 1000)[0]?.path).toBe('cron');
    expect(checkScheduleTiming({ cron: '61 * * * *' }, 1000)[0]?.message).toMatch(/^not a cron/);
    expect(checkScheduleTiming({ cron: '0 0 30 2 *' }, 1000)[0]?.path).toBe('cron');
    expect(checkScheduleTiming({ cron: '0 6 * * *', tz: 'Mars/Olympus' }, 1000)[0]?.path).toBe(
      'tz',
    );
  });
});
