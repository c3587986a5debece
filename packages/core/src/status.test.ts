import { describe, expect, it } from 'vitest';
import { isTerminal, toTaskStatus, type BullJobState, type TaskFacts } from './status.js';

const plain: TaskFacts = { cancelRequested: false, awaitingInput: false };
const parked: TaskFacts = { cancelRequested: false, awaitingInput: true };
const cancelled: TaskFacts = { cancelRequested: true, awaitingInput: false };

describe('toTaskStatus', () => {
  it.each<[BullJobState, TaskFacts, string]>([
    ['waiting', plain, 'working'],
    ['prioritized', plain, 'working'],
    ['active', plain, 'working'],
    ['waiting-children', plain, 'working'],
    ['delayed', plain, 'working'], // retry backoff
    ['delayed', parked, 'input_required'],
    ['completed', plain, 'completed'],
    ['failed', plain, 'failed'],
    ['failed', { ...plain, willRetry: true }, 'working'],
    ['unknown', plain, 'failed'],
    ['waiting', cancelled, 'cancelled'],
    ['active', cancelled, 'cancelled'],
    ['delayed', { ...parked, cancelRequested: true }, 'cancelled'],
    ['unknown', cancelled, 'cancelled'],
  ])('%s with %o is %s', (state, facts, expected) => {
    expect(toTaskStatus(state, facts)).toBe(expected);
  });

  it('throws on a state it does not know instead of guessing', () => {
    expect(() => toTaskStatus('paused' as BullJobState, plain)).toThrow(/Unhandled/);
  });
});

describe('isTerminal', () => {
  it.each([
    ['working', false],
    ['input_required', false],
    ['completed', true],
    ['cancelled', true],
    ['failed', true],
  ] as const)('%s → %s', (status, expected) => {
    expect(isTerminal(status)).toBe(expected);
  });
});
