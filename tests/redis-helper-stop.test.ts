/**
 * `startRedis` (scripts/redis.mjs, used by `npm start`, the test setup and the cluster helper)
 * stops what it started even when nothing else keeps the caller's process alive: a teardown that
 * stops several servers one after another must stop them all. `npm test`'s cluster run left two
 * of its three redis-servers running after every run: the started child is unref'd, so while the
 * first stop awaited its exit the process had nothing left to wait for and ended.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, expect, it } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'longrun-stop-'));
const pids: number[] = [];
afterAll(() => {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone, as it should be
    }
  }
  rmSync(dir, { recursive: true, force: true });
});

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

it('stops every server it started, one after another, before the process ends', () => {
  const script = `
    import { findRedisServer, freePort, startRedis } from ${JSON.stringify(resolve(import.meta.dirname, '../scripts/redis.mjs'))};
    const bin = findRedisServer();
    const servers = [];
    for (let i = 0; i < 3; i++) {
      const port = await freePort();
      servers.push(await startRedis({ bin, port, dir: ${JSON.stringify(dir)} + '/' + port, appendonly: false }));
    }
    console.log(JSON.stringify(servers.map((s) => s.child.pid)));
    for (const s of servers) await s.stop();
    console.log('stopped');
  `;
  const out = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  const started = JSON.parse(out.stdout.split('\n')[0] ?? '[]') as number[];
  pids.push(...started);
  expect(started).toHaveLength(3);
  expect(started.filter(alive), out.stderr).toEqual([]);
  expect(out.stdout).toContain('stopped');
});
