import { describe, expect, it } from 'vitest';
import { checkScheduleTiming, CRON_CHECK_BUDGET } from './schedule-timing.js';

/** What the check answers, as a list of field errors (empty: accepted). */
const errors = (timing: { cron?: string; tz?: string }, minEveryMs: number) => {
  const verdict = checkScheduleTiming(timing, minEveryMs);
  return verdict.ok ? [] : [verdict.error];
};

/** A fixed "now" (a Wednesday, 2025-03-12 10:00 UTC), so horizons do not move with the date. */
const NOW = Date.parse('2025-03-12T10:00:00Z');
const DAY = 86_400_000;

describe('checkScheduleTiming', () => {
  it('accepts a cron whose runs are at least the minimum apart, in UTC or a named zone', () => {
    expect(errors({ cron: '*/15 * * * *' }, 60_000)).toEqual([]);
    expect(errors({ cron: '0 9 * * 1-5', tz: 'Europe/Paris' }, 60_000)).toEqual([]);
    expect(errors({ cron: '* * * * * *' }, 1000)).toEqual([]);
    expect(errors({ cron: '@hourly' }, 1000)).toEqual([]);
    expect(errors({}, 1000)).toEqual([]);
  });

  it('refuses runs closer than the minimum, even when only some of them are', () => {
    const [every30s] = errors({ cron: '*/30 * * * * *' }, 60_000);
    expect(every30s).toEqual({
      path: 'cron',
      message: 'runs 30000 ms apart; schedules may run at most every 60000 ms',
    });
    // Two runs a second apart each minute: the minute between them does not hide it.
    expect(errors({ cron: '0,1 * * * * *' }, 2000)).toHaveLength(1);
  });

  it('refuses what does not parse, never runs, or names no time zone', () => {
    expect(errors({ cron: 'every day' }, 1000)[0]?.path).toBe('cron');
    expect(errors({ cron: '61 * * * *' }, 1000)[0]?.message).toMatch(/^not a cron/);
    expect(errors({ cron: '0 0 30 2 *' }, 1000)[0]?.path).toBe('cron');
    expect(errors({ cron: '0 6 * * *', tz: 'Mars/Olympus' }, 1000)[0]?.path).toBe('tz');
  });

  // Issue 27 #14: '0 0 0 ? 2 7#5' in Pacific/Chatham cost ~1.1 s of event loop (twenty runs,
  // 28 years apart) and '0 0 0 31 2,4,6,9,11 *' 226 ms (cron-parser's loop limit, refused as
  // "never runs"): the search now stops at the budget's horizon.
  it('stops a rare or never-matching cron at its horizon and refuses it as too rare', () => {
    for (const cron of ['0 0 0 ? 2 7#5', '0 0 0 31 2,4,6,9,11 *']) {
      const verdict = checkScheduleTiming(
        { cron, tz: 'Pacific/Chatham' },
        1000,
        CRON_CHECK_BUDGET,
        NOW,
      );
      expect(verdict).toEqual({
        ok: false,
        refusal: 'too-rare',
        error: {
          path: 'cron',
          message:
            'no run within the next 367 days: the pattern never runs, or too rarely to be checked',
        },
        // One call of next(), which stopped at the horizon.
        iterations: 1,
      });
    }
  });

  it('looks no further than the budget: a tiny horizon refuses a daily cron, and the runs looked at are capped', () => {
    // The next 06:00 is 20 hours away; a horizon of an hour does not reach it.
    const hour = checkScheduleTiming(
      { cron: '0 6 * * *' },
      1000,
      { maxRuns: 20, horizonMs: 3_600_000 },
      NOW,
    );
    expect(hour).toMatchObject({ ok: false, refusal: 'too-rare', iterations: 1 });
    expect(hour.ok || hour.error.message).toMatch(/^no run within the next 1 hour:/);
    // Three runs asked for: three next() calls, however many more runs there are.
    const three = checkScheduleTiming(
      { cron: '* * * * * *' },
      1000,
      { maxRuns: 3, horizonMs: DAY },
      NOW,
    );
    expect(three).toEqual({ ok: true, runsSeen: 3, iterations: 3 });
  });

  it('accepts a yearly cron from its runs within the horizon (one), and checks gaps across days', () => {
    expect(checkScheduleTiming({ cron: '0 0 1 1 *' }, 1000, CRON_CHECK_BUDGET, NOW)).toEqual({
      ok: true,
      runsSeen: 1,
      iterations: 2,
    });
    // On each 1 January, two runs a minute apart: seen in the horizon's one January.
    const twice = checkScheduleTiming({ cron: '0 0,1 0 1 1 *' }, 120_000, CRON_CHECK_BUDGET, NOW);
    expect(twice).toMatchObject({ ok: false, refusal: 'too-frequent' });
    // 23:59 and 00:00 the next day.
    const midnight = checkScheduleTiming(
      { cron: '0 0,59 0,23 * * *' },
      120_000,
      CRON_CHECK_BUDGET,
      NOW,
    );
    expect(midnight).toMatchObject({ ok: false, refusal: 'too-frequent' });
  });
});
