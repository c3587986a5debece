import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { FailureLog, isDependencyError } from './failure-log.js';

/** A real pino logger writing JSON lines into an array. */
function lines() {
  const out: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      out.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level: 'info' }, stream), out };
}

const refused = () =>
  Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' });

describe('FailureLog', () => {
  it('writes a dependency failure once per kind per interval, without its stack, counting the rest', async () => {
    const { logger, out } = lines();
    let now = 0;
    const log = new FailureLog(logger, { intervalMs: 30_000, now: () => now });
    for (let i = 0; i < 50; i++) {
      log.warn({ err: refused() }, 'redis connection error');
      log.warn({ err: new Error('Connection is closed.') }, 'worker error');
      now += 100;
    }
    // Another port, the same kind (its code).
    log.warn({ err: refused() }, 'redis connection error');
    now = 30_001;
    log.warn({ err: refused() }, 'redis connection error');
    log.restored({}, 'redis connection restored');
    log.restored({}, 'redis connection restored'); // every connection says it: one line
    await new Promise((r) => setImmediate(r));
    expect(out.map((l) => [l.msg, l.err, l.suppressed])).toEqual([
      ['redis connection error', 'connect ECONNREFUSED 127.0.0.1:6379', undefined],
      ['worker error', 'Connection is closed.', undefined],
      ['redis connection error', 'connect ECONNREFUSED 127.0.0.1:6379', 50],
      ['redis connection restored', undefined, 49],
    ]);
    expect(out[0]).toMatchObject({ code: 'ECONNREFUSED', level: 40 });
    expect(JSON.stringify(out)).not.toMatch(/\n\s+at /);
  });

  it('lets every other line through as it is, stack included', async () => {
    const { logger, out } = lines();
    const log = new FailureLog(logger);
    for (let i = 0; i < 3; i++) log.warn({ err: new TypeError('x is undefined') }, 'a bug');
    log.warn({ taskId: 't1' }, 'reconciler repaired a task');
    log.restored({}, 'redis connection restored'); // nothing failed: no line
    await new Promise((r) => setImmediate(r));
    expect(out.map((l) => l.msg)).toEqual([
      'a bug',
      'a bug',
      'a bug',
      'reconciler repaired a task',
    ]);
    expect((out[0]?.err as { stack: string }).stack).toMatch(/TypeError: x is undefined\n\s+at /);
  });

  it('knows a dependency failure from a bug', () => {
    expect(isDependencyError(refused())).toBe(true);
    expect(isDependencyError('connect ECONNREFUSED 127.0.0.1:1')).toBe(true);
    expect(isDependencyError(new Error("NOGROUP No such key 'x' or consumer group 'relay'"))).toBe(
      true,
    );
    expect(isDependencyError(new Error('LOADING Redis is loading the dataset in memory'))).toBe(
      true,
    );
    expect(isDependencyError(new Error('OOM command not allowed'))).toBe(true);
    expect(isDependencyError(new TypeError('x is undefined'))).toBe(false);
    expect(isDependencyError(undefined)).toBe(false);
  });
});
