import { spawn, spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { waitFor } from './helpers/http.js';
import { KEY_A, uniquePrefix } from './helpers/service.js';

// No process outlives the npm script it was started by (issue 41, item 13): `kill -TERM` of
// `npm run start:api` (or `start:worker`) stops the app, as a process manager expects when it
// runs the documented command.

const root = resolve(import.meta.dirname, '..');
const leftovers = new Set<number>();
afterAll(() => {
  for (const pid of leftovers) if (alive(pid)) process.kill(pid, 'SIGKILL');
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Every process below `pid` (children, grandchildren…), from `ps`. */
function descendants(pid: number): number[] {
  const ps = spawnSync('ps', ['-e', '-o', 'pid=,ppid='], { encoding: 'utf8' }).stdout;
  const byParent = new Map<number, number[]>();
  for (const line of ps.trim().split('\n')) {
    const [child, parent] = line.trim().split(/\s+/).map(Number);
    byParent.set(parent!, [...(byParent.get(parent!) ?? []), child!]);
  }
  const out: number[] = [];
  const walk = (p: number) => {
    for (const c of byParent.get(p) ?? []) {
      out.push(c);
      walk(c);
    }
  };
  walk(pid);
  return out;
}

describe('npm scripts stop their app on SIGTERM', () => {
  for (const [script, ready] of [
    ['start:api', '"api ready"'],
    ['start:worker', '"worker ready"'],
  ] as const) {
    it(
      `kill -TERM of \`npm run ${script}\` leaves no process behind`,
      { timeout: 60_000 },
      async () => {
        const npm = spawn('npm', ['run', script], {
          cwd: root,
          env: {
            ...process.env,
            REDIS_URL: inject('redisUrl'),
            LONGRUN_PREFIX: uniquePrefix(),
            LONGRUN_API_KEYS: `alpha:${KEY_A}`,
            PORT: '0',
            LONGRUN_METRICS_PORT: '0',
            LONGRUN_METRICS_HOST: '127.0.0.1',
            LOG_LEVEL: 'info',
            LONGRUN_LOG_FORMAT: 'json',
          },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let output = '';
        npm.stdout.on('data', (d: Buffer) => (output += d.toString()));
        npm.stderr.on('data', (d: Buffer) => (output += d.toString()));
        const exited = new Promise<void>((r) => npm.once('exit', () => r()));
        await waitFor(async () => output.includes(ready) || undefined, {
          timeoutMs: 30_000,
          what: `${script} ready:\n${output}`,
        });
        const below = descendants(npm.pid!);
        for (const pid of below) leftovers.add(pid);
        expect(below.length).toBeGreaterThan(0);
        npm.kill('SIGTERM');
        await exited;
        // The app may take a moment to finish its shutdown after npm returned.
        for (let i = 0; i < 100 && below.some(alive); i++) await sleep(100);
        expect(below.filter(alive), `still running after npm stopped:\n${output}`).toEqual([]);
      },
    );
  }
});
