// Reliability 3: Redis restarts under submit load. A private redis-server with AOF
// (appendfsync always / everysec) is stopped mid-run by SIGKILL (a crash) or SIGTERM (a clean stop),
// then restarted on the same port and data dir. Counts how many 202-acknowledged tasks survive; the
// API must answer 503 (never 500) while Redis is down and recover by itself; clients retry refused
// submits with their Idempotency-Key; every task in the end completes exactly once.
// Sizes: CHAOS_SCALE scales the load phases (CHAOS_RESTART_BEFORE_MS / CHAOS_RESTART_AFTER_MS).
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { shardOfTaskId, shardPrefix } from '@longrun/engine/internal';
import { KEY_A, startInProcessApi, startWorker } from '../helpers/service.js';
import {
  adminRedis,
  Cleanups,
  keepAliveAgent,
  closeBooks,
  idemKey,
  NetError,
  privateRedis,
  rawRequest,
  report,
  scaled,
  secondsSince,
  summary,
  Tally,
  tempDir,
  COUNT_RUNS,
} from './helpers.js';

const BEFORE_MS = scaled('RESTART_BEFORE_MS', 3000, 800);
const DOWN_MS = 2000;
const AFTER_MS = scaled('RESTART_AFTER_MS', 2000, 800);
const SUBMITTERS = 16;
/** Which fsync policy × stop signal pairs to run; CHAOS_RESTART_VARIANTS=always:SIGKILL,… picks. */
const ALL_VARIANTS: [Fsync, NodeJS.Signals][] = [
  ['always', 'SIGKILL'],
  ['everysec', 'SIGKILL'],
  ['always', 'SIGTERM'],
  ['everysec', 'SIGTERM'],
];
const VARIANTS = process.env.CHAOS_RESTART_VARIANTS
  ? ALL_VARIANTS.filter(([f, s]) =>
      process.env.CHAOS_RESTART_VARIANTS!.split(',').includes(`${f}:${s}`),
    )
  : ALL_VARIANTS;

const cleanups = new Cleanups();
afterEach(() => cleanups.run());

type Fsync = 'always' | 'everysec';
type Phase = 'before' | 'down' | 'after';

describe('Redis restart with AOF', () => {
  it.each<[Fsync, NodeJS.Signals]>(VARIANTS)(
    'appendfsync %s, Redis stopped with %s mid-run',
    async (fsync, signal) => {
      const started = performance.now();
      const dir = tempDir(cleanups, 'aof');
      const args = ['--appendfsync', fsync];
      const redis = await privateRedis(cleanups, { dir, appendonly: true, args });
      const api = await startInProcessApi({ redisUrl: redis.url, redisTimeoutMs: 1000 });
      cleanups.add(() => api.close());
      const worker = await startWorker(api.prefix, {
        ...COUNT_RUNS,
        REDIS_URL: redis.url,
        LONGRUN_LOCK_DURATION_MS: '1000',
        LONGRUN_STALLED_INTERVAL_MS: '500',
        LONGRUN_MAX_STALLED_COUNT: '10',
      });
      cleanups.add(() => worker.kill());
      const admin = adminRedis(cleanups, redis.url);
      const agent = keepAliveAgent(cleanups, SUBMITTERS);

      let phase: Phase = 'before';
      let submitting = true;
      const statuses: Record<Phase, Tally> = {
        before: new Tally(),
        down: new Tally(),
        after: new Tally(),
      };
      const acked: { id: string; phase: Phase; sleep: boolean }[] = [];
      const refused: { key: string; body: unknown }[] = [];
      const unexpected: string[] = [];
      const slow503: number[] = []; // latency of 503s answered before Redis was stopped
      let firstAckAfterRestart: number | undefined;
      let restartedAt = 0;
      let n = 0;

      const submitter = async () => {
        while (submitting) {
          const key = idemKey();
          const i = n++;
          const body =
            i % 4 === 0 ? { type: 'sleep', input: { ms: 200 } } : { type: 'echo', input: { i } };
          try {
            const res = await rawRequest(api.url, {
              method: 'POST',
              path: '/v1/jobs',
              key: KEY_A,
              body,
              headers: { 'idempotency-key': key },
              agent,
              timeoutMs: 10_000,
            });
            const at = phase; // when it was answered
            statuses[at].add(res.status);
            if (res.status === 202) {
              acked.push({ id: res.body.taskId, phase: at, sleep: body.type === 'sleep' });
              if (at === 'after' && firstAckAfterRestart === undefined) {
                firstAckAfterRestart = performance.now() - restartedAt;
              }
            } else if (res.status === 503) {
              refused.push({ key, body });
              if (at === 'before') slow503.push(Math.round(res.ms));
              await sleep(50); // a client backs off a little
            } else {
              unexpected.push(`${res.status} ${res.text}`);
            }
          } catch (error) {
            unexpected.push(`network ${(error as NetError).code}`);
          }
        }
      };
      const loops = Array.from({ length: SUBMITTERS }, submitter);

      await sleep(BEFORE_MS);
      phase = 'down';
      const ackedBeforeStop = acked.length;
      await redis.kill(signal);
      await sleep(DOWN_MS / 2);
      const readyDown = await rawRequest(api.url, { path: '/readyz', timeoutMs: 5000 });
      await sleep(DOWN_MS / 2);
      const again = await privateRedis(cleanups, { dir, port: redis.port, appendonly: true, args });
      restartedAt = performance.now();
      phase = 'after';
      // Clients reconnect with a backoff of up to 1 s: wait for the first 202, then keep going.
      for (let i = 0; i < 150 && firstAckAfterRestart === undefined; i++) await sleep(100);
      await sleep(AFTER_MS);
      submitting = false;
      await Promise.all(loops);
      expect(again.port).toBe(redis.port);

      // Which acknowledged tasks survived the restart?
      const pipeline = admin.pipeline();
      for (const { id } of acked) {
        pipeline.exists(`${shardPrefix(api.prefix, shardOfTaskId(id))}:task:${id}`);
      }
      const exists = ((await pipeline.exec()) ?? []).map(([, v]) => v === 1);
      const lost = acked.filter((_, i) => !exists[i]);

      // Clients retry what was refused, with the same Idempotency-Key and body.
      let replayedAfter503 = 0;
      const retried: string[] = [];
      for (const { key, body } of refused) {
        for (let attempt = 0; attempt < 10; attempt++) {
          const res = await rawRequest(api.url, {
            method: 'POST',
            path: '/v1/jobs',
            key: KEY_A,
            body,
            headers: { 'idempotency-key': key },
            agent,
          });
          if (res.status === 202) {
            retried.push(res.body.taskId);
            if (res.headers['idempotent-replayed'] === 'true') replayedAfter503 += 1;
            break;
          }
          expect([409, 503], res.text).toContain(res.status);
          await sleep(200);
        }
      }

      const survivors = acked.filter((_, i) => exists[i]).map((a) => a.id);
      // A quarter are 200 ms sleeps on a queue of their own, worked off at the worker's
      // concurrency (8): a fast host submits more of them than a minute's work, so the wait
      // grows with that backlog (a backlog still being worked off is not lost work).
      const sleeps =
        acked.filter((a) => a.sleep).length +
        refused.filter((r) => (r.body as { type: string }).type === 'sleep').length;
      const books = await closeBooks(admin, api.prefix, [...survivors, ...retried], {
        timeoutMs: 60_000 + 2 * Math.ceil((sleeps * 200) / 8),
      });
      const figures = {
        fsync,
        signal,
        acknowledged: acked.length,
        acknowledgedBeforeStop: ackedBeforeStop,
        survivedRestart: acked.length - lost.length,
        lostOnRestart: lost.length,
        lostByPhase: {
          before: lost.filter((l) => l.phase === 'before').length,
          down: lost.filter((l) => l.phase === 'down').length,
        },
        statuses: {
          before: statuses.before.counts,
          down: statuses.down.counts,
          after: statuses.after.counts,
        },
        refused503: refused.length,
        retriedOk: retried.length,
        refused503ButStored: replayedAfter503,
        readyzWhileDown: readyDown.status,
        '503BeforeStopMs': slow503.slice(0, 10),
        recoveryMs: firstAckAfterRestart === undefined ? null : Math.round(firstAckAfterRestart),
        ...summary(books),
        seconds: secondsSince(started),
      };
      report('redis-restart', figures);

      expect(unexpected, unexpected.slice(0, 5).join('\n')).toEqual([]);
      for (const tally of Object.values(statuses)) {
        for (const code of tally.keys()) expect(['202', '503']).toContain(code);
      }
      expect(statuses.down.get(503), 'no 503 while Redis was down').toBeGreaterThan(0);
      expect(readyDown.status).toBe(503);
      expect(firstAckAfterRestart, 'no 202 after Redis came back').toBeDefined();
      expect(retried.length).toBe(refused.length);
      if (fsync === 'always' || signal === 'SIGTERM') {
        expect(
          lost.map((l) => l.id),
          'acknowledged tasks lost',
        ).toEqual([]);
      }
      expect(books.lost).toBe(0);
      const unfinished = `unfinished: ${books.unfinishedIds.slice(0, 5).join(', ')}`;
      if (fsync === 'always' || signal === 'SIGTERM' || lost.length === 0) {
        expect(books.unfinished, unfinished).toBe(0);
        expect(books.completed).toBe(books.accepted);
      } else {
        // everysec + a crash that lost the AOF's tail: the cut can fall between a task's record
        // and its job (two writes), leaving a record whose job is gone; it stays `working` until
        // its ttl (docs/RELIABILITY.md). Only tasks acknowledged before the restart can be such.
        const beforeRestart = new Set(acked.filter((a) => a.phase !== 'after').map((a) => a.id));
        for (const id of books.unfinishedIds) expect(beforeRestart.has(id), unfinished).toBe(true);
        expect(books.completed).toBe(books.accepted - books.unfinished);
      }
      expect(books.terminalTwice).toBe(0);
      expect(books.unacknowledged, 'task records no 202 acknowledged').toBe(0);
    },
  );
});
