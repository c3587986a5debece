import { CronExpressionParser } from 'cron-parser';
import type { FieldError } from './engine/outcomes.js';

/** The time zone a cron is read in when the schedule names none. */
export const DEFAULT_SCHEDULE_TZ = 'UTC';

const DAY_MS = 86_400_000;

/**
 * How much of a cron's future the create check may look at (decision 49). cron-parser finds a
 * run by stepping: a month at a time past a month that does not match, a day at a time past a
 * day that does not, straight to the next matching hour, minute and second. So a search bounded
 * in time is bounded in steps: one over `horizonMs` takes at most about one step per day, one
 * per month and a few per run, whatever the pattern (a year and two days: under 400 steps).
 * Unbounded, a rare or never-matching pattern cost up to cron-parser's own loop limit of
 * 10 000 steps per run: over a second of the event loop for twenty runs of `0 0 0 ? 2 7#5` in
 * Pacific/Chatham, during which no other request of any tenant was served.
 */
export interface CronCheckBudget {
  /** The runs looked for (their gaps are checked). */
  maxRuns: number;
  /**
   * How far ahead runs are looked for. A year and two days by default: a cron's pattern repeats
   * every year (but for leap days and weekday alignment), so every gap it has shows within it.
   */
  horizonMs: number;
}

export const CRON_CHECK_BUDGET: CronCheckBudget = { maxRuns: 20, horizonMs: 367 * DAY_MS };

/** Why a schedule's timing is refused. */
export type TimingRefusal =
  /** `tz` is not an IANA time zone. */
  | 'time-zone'
  /** The cron does not parse. */
  | 'syntax'
  /** Two runs closer than the minimum. */
  | 'too-frequent'
  /** No run within the check's horizon: the cron never runs, or too rarely to be checked. */
  | 'too-rare';

/** What the check found: its verdict, and the work it did (the `next()` calls it made). */
export type TimingVerdict =
  | { ok: true; runsSeen: number; iterations: number }
  | { ok: false; refusal: TimingRefusal; error: FieldError; iterations: number };

/**
 * Whether a schedule's timing is accepted: a cron that parses (with cron-parser, the parser
 * BullMQ computes its runs with, at BullMQ's own version) in a time zone that is one, runs at
 * least once within the budget's horizon, and whose runs there (up to `maxRuns`) are at least
 * `minEveryMs` apart. `everyMs` itself is bounded by the request schema. The search never looks
 * past `now + horizonMs`, so its cost is bounded whatever the pattern (`CronCheckBudget`).
 * @example checkScheduleTiming({ cron: '* * * * * *' }, 1000) // { ok: true, runsSeen: 20, … }
 */
export function checkScheduleTiming(
  timing: { cron?: string | undefined; tz?: string | undefined },
  minEveryMs: number,
  budget: CronCheckBudget = CRON_CHECK_BUDGET,
  now: number = Date.now(),
): TimingVerdict {
  if (timing.cron === undefined) return { ok: true, runsSeen: 0, iterations: 0 };
  const tz = timing.tz ?? DEFAULT_SCHEDULE_TZ;
  if (!isTimeZone(tz)) {
    return refuse('time-zone', 0, {
      path: 'tz',
      message: `"${tz}" is not an IANA time zone (e.g. Europe/Paris, UTC)`,
    });
  }
  const until = now + budget.horizonMs;
  const runs: number[] = [];
  let iterations = 0;
  try {
    const expression = CronExpressionParser.parse(timing.cron, {
      tz,
      currentDate: now,
      endDate: until,
    });
    const upcoming = expression[Symbol.iterator]();
    while (runs.length < budget.maxRuns) {
      iterations += 1;
      const next = nextWithin(upcoming);
      if (next === null) break;
      runs.push(next);
    }
  } catch (error) {
    return refuse('syntax', iterations, {
      path: 'cron',
      message: `not a cron pattern: ${(error as Error).message}`,
    });
  }
  if (runs.length === 0) {
    return refuse('too-rare', iterations, {
      path: 'cron',
      message: `no run within the next ${span(budget.horizonMs)}: the pattern never runs, or too rarely to be checked`,
    });
  }
  for (let i = 1; i < runs.length; i += 1) {
    const gap = (runs[i] as number) - (runs[i - 1] as number);
    if (gap < minEveryMs) {
      return refuse('too-frequent', iterations, {
        path: 'cron',
        message: `runs ${gap} ms apart; schedules may run at most every ${minEveryMs} ms`,
      });
    }
  }
  return { ok: true, runsSeen: runs.length, iterations };
}

/**
 * The expression's next run, or null past its end date (the check's horizon). Its iterator ends
 * where `next()` would throw: past the end date, or at cron-parser's loop limit, which a search
 * bounded by the horizon stays far below (under 400 of its 10 000 steps).
 */
function nextWithin(runs: Iterator<{ getTime(): number }>): number | null {
  const step = runs.next();
  return step.done ? null : step.value.getTime();
}

/** A horizon in words: days, or hours under two days. */
function span(ms: number): string {
  if (ms >= 2 * DAY_MS) return `${Math.round(ms / DAY_MS)} days`;
  const hours = Math.max(1, Math.round(ms / 3_600_000));
  return `${hours} hour${hours === 1 ? '' : 's'}`;
}

function refuse(refusal: TimingRefusal, iterations: number, error: FieldError): TimingVerdict {
  return { ok: false, refusal, error, iterations };
}

/** Whether `tz` names a time zone this runtime knows. */
function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}
