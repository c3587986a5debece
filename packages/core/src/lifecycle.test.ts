import { describe, expect, it } from 'vitest';
import {
  canApply,
  guardArg,
  LIFECYCLE,
  MAX_REPAIRS,
  OPEN_STATUSES,
  repairFor,
  type LifecycleEventName,
  type RepairFacts,
} from './lifecycle.js';
import { TASK_STATUSES, TERMINAL_STATUSES } from './status.js';

const events = Object.keys(LIFECYCLE) as LifecycleEventName[];

describe('the lifecycle table', () => {
  it('has no way out of a terminal status', () => {
    for (const event of events) {
      for (const status of TERMINAL_STATUSES) expect(canApply(event, status)).toBe(false);
    }
  });

  it('leads only to one of the five statuses, from open ones', () => {
    for (const event of events) {
      const row = LIFECYCLE[event];
      if (row.to !== null) expect(TASK_STATUSES).toContain(row.to);
      for (const from of row.from) expect(OPEN_STATUSES).toContain(from);
    }
  });

  it('answers only a task waiting for input, and parks only a working one', () => {
    expect(canApply('answer', 'input_required')).toBe(true);
    expect(canApply('answer', 'working')).toBe(false);
    expect(canApply('park', 'working')).toBe(true);
    expect(canApply('park', 'input_required')).toBe(false);
    expect(canApply('cancel', 'input_required')).toBe(true);
  });

  it('gives the scripts each guard as space-delimited statuses', () => {
    expect(guardArg('answer')).toBe(' input_required ');
    expect(guardArg('cancel')).toBe(' working input_required ');
    // What the Lua check does: find ' <status> ' in the guard.
    for (const event of events) {
      for (const status of TASK_STATUSES) {
        expect(guardArg(event).includes(` ${status} `)).toBe(canApply(event, status));
      }
    }
  });
});

describe('repairFor', () => {
  const working: RepairFacts = {
    status: 'working',
    jobState: 'waiting',
    parked: false,
    started: false,
    answers: 0,
    repairs: 0,
  };

  it.each<[string, Partial<RepairFacts>, string]>([
    ['a queued job', {}, 'none'],
    ['a running job', { jobState: 'active', started: true }, 'none'],
    ['a retry backoff', { jobState: 'delayed', started: true }, 'none'],
    ['no job, never started', { jobState: 'unknown' }, 'requeue'],
    ['no job, answered', { jobState: 'unknown', started: true, answers: 1 }, 'requeue'],
    ['no job, started', { jobState: 'unknown', started: true }, 'jobLost'],
    ['no job, requeued too often', { jobState: 'unknown', repairs: MAX_REPAIRS }, 'jobLost'],
    ['parked, record says working', { jobState: 'delayed', parked: true }, 'promote'],
    ['waiting for input, no job', { status: 'input_required', jobState: 'unknown' }, 'none'],
    [
      'waiting for input, parked',
      { status: 'input_required', jobState: 'delayed', parked: true },
      'none',
    ],
  ])('%s: %o → %s', (_what, facts, expected) => {
    expect(repairFor({ ...working, ...facts })).toBe(expected);
  });
});
