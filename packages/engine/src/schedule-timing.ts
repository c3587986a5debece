import { CronExpressionParser } from 'cron-parser';
import type { FieldError } from './engine/outcomes.js';

/** The time zone a cron is read in when the schedule names none. */
export const DEFAULT_SCHEDULE_TZ = 'UTC';

/** How many upcoming runs of a cron are checked for a gap shorter than the minimum. */
const RUNS_CHECKED = 20;

/**
 * Why a schedule's timing is refused: a cron that does not parse (with cron-parser, the parser
 * BullMQ computes its runs with, at BullMQ's own version), a time zone that is not one, or runs
 * closer together than `minEveryMs` (among a cron's next runs). Empty when it is fine.
 * `everyMs` itself is bounded by the request schema.
 * @example checkScheduleTiming({ cron: '* * * * * *' }, 1000) // [{ path: 'cron', … 1000 ms }]
 */
export function checkScheduleTiming(
  timing: { cron?: string | undefined; tz?: string | undefined },
  minEveryMs: number,
): FieldError[] {
  if (timing.cron === undefined) return [];
  const tz = timing.tz ?? DEFAULT_SCHEDULE_TZ;
  if (!isTimeZone(tz)) {
    return [{ path: 'tz', message: `"${tz}" is not an IANA time zone (e.g. Europe/Paris, UTC)` }];
  }
  let runs: number[];
  try {
    const expression = CronExpressionParser.parse(timing.cron, { tz });
    runs = [];
    for (let i = 0; i < RUNS_CHECKED && expression.hasNext(); i += 1) {
      runs.push(expression.next().getTime());
    }
  } catch (error) {
    return [{ path: 'cron', message: `not a cron pattern: ${(error as Error).message}` }];
  }
  if (runs.length === 0) return [{ path: 'cron', message: 'never runs' }];
  for (let i = 1; i < runs.length; i += 1) {
    const gap = (runs[i] as number) - (runs[i - 1] as number);
    if (gap < minEveryMs) {
      return [
        {
          path: 'cron',
          message: `runs ${gap} ms apart; schedules may run at most every ${minEveryMs} ms`,
        },
      ];
    }
  }
  return [];
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
