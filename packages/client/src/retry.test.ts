import { describe, expect, it } from 'vitest';
import { backoffDelay, delay, parseRetryAfter } from './retry.js';

describe('parseRetryAfter', () => {
  it('reads seconds and HTTP dates', () => {
    expect(parseRetryAfter('3')).toBe(3);
    expect(parseRetryAfter(null)).toBeUndefined();
    expect(parseRetryAfter('soon')).toBeUndefined();
    const now = Date.parse('2026-11-30T10:00:00Z');
    expect(parseRetryAfter('Mon, 30 Nov 2026 10:00:05 GMT', now)).toBe(5);
    expect(parseRetryAfter('Mon, 30 Nov 2026 09:00:00 GMT', now)).toBe(0);
  });
});

describe('backoffDelay', () => {
  it('grows, is capped, and never undercuts Retry-After', () => {
    const policy = { minDelayMs: 100, maxDelayMs: 1000 };
    for (let i = 0; i < 20; i++) {
      expect(backoffDelay(0, policy)).toBeGreaterThanOrEqual(50);
      expect(backoffDelay(0, policy)).toBeLessThanOrEqual(100);
      expect(backoffDelay(3, policy)).toBeGreaterThanOrEqual(400);
      expect(backoffDelay(10, policy)).toBeLessThanOrEqual(1000);
      expect(backoffDelay(0, policy, 2)).toBe(2000);
    }
  });
});

describe('delay', () => {
  it('rejects with the abort reason', async () => {
    const controller = new AbortController();
    const reason = new Error('stop');
    const waiting = delay(60_000, controller.signal);
    controller.abort(reason);
    await expect(waiting).rejects.toBe(reason);
    await expect(delay(1, AbortSignal.abort(reason))).rejects.toBe(reason);
  });
});
