import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '..');

// `unshare -n` gives a private network namespace whose loopback has no Redis on 6379, exactly
// like a fresh machine, without touching the shared Redis. Needs root (as CI and dev boxes here).
const canUnshare = process.getuid?.() === 0 && spawnSync('unshare', ['-n', 'true']).status === 0;

/**
 * Runs `npm start` in a network namespace of its own, submits an echo task, stops it with `stop`
 * (a shell line; `$pid` is npm's) and reports what it saw, one line each.
 */
function startAndStop(stop: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'longrun-start-'));
  const script = join(dir, 'run.sh');
  writeFileSync(
    script,
    `set -u
ip link set lo up
cd ${JSON.stringify(root)}
export LONGRUN_DATA_DIR=${dir}/data LONGRUN_SKIP_BUILD=1
setsid npm start > ${dir}/out.log 2>&1 &
pid=$!
for i in $(seq 1 120); do grep -q '"api ready"' ${dir}/out.log && grep -q '"worker ready"' ${dir}/out.log && break; sleep 0.25; done
key=$(grep -o 'dev-[A-Za-z0-9_-]*' ${dir}/out.log | head -1)
node -e '
  const key = process.argv[1];
  const h = { authorization: "Bearer " + key, "content-type": "application/json" };
  (async () => {
    const sub = await fetch("http://127.0.0.1:3000/v1/jobs", { method: "POST", headers: h, body: JSON.stringify({ type: "echo", input: { n: 7 } }) });
    const { taskId } = await sub.json();
    for (let i = 0; i < 100; i++) {
      const r = await fetch("http://127.0.0.1:3000/v1/jobs/" + taskId + "/result", { headers: h });
      if (r.status === 200) { console.log("RESULT " + sub.status + " " + JSON.stringify(await r.json())); return; }
      await new Promise((ok) => setTimeout(ok, 100));
    }
    console.log("RESULT timeout");
  })();
' "$key"
${stop}
for i in $(seq 1 80); do kill -0 $pid 2>/dev/null || break; sleep 0.25; done
kill -0 $pid 2>/dev/null && echo "STILL RUNNING" || echo "STOPPED"
up() { node -e 'fetch("http://127.0.0.1:3000/healthz").then(() => process.exit(0), () => process.exit(1))'; }
for i in $(seq 1 80); do up || break; sleep 0.25; done
up && echo "API STILL UP" || echo "API DOWN"
# npm may return before its child has finished stopping: give Redis' shutdown (AOF) a moment.
for i in $(seq 1 40); do redis-cli -p 6379 ping >/dev/null 2>&1 || break; sleep 0.25; done
redis-cli -p 6379 ping >/dev/null 2>&1 && echo "REDIS STILL UP" || echo "REDIS DOWN"
grep "longrun\\]" ${dir}/out.log
ls ${dir}/data/redis
`,
  );
  try {
    const run = spawnSync('unshare', ['-n', 'bash', script], {
      encoding: 'utf8',
      timeout: 120_000,
    });
    return run.stdout + run.stderr;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe.skipIf(!canUnshare)('npm start on a machine without Redis', () => {
  it('starts its own redis-server, runs API + worker, serves a task end to end, stops cleanly', () => {
    // Ctrl-C: SIGINT to the whole process group, as a terminal sends it.
    const out = startAndStop('kill -INT -- -$pid');
    expect(out).toMatch(
      /RESULT 202 \{"taskId":"[0-9a-f-]+","status":"completed","result":\{"n":7\}\}/,
    );
    expect(out).toContain('[longrun] started redis-server on 127.0.0.1:6379 (AOF on');
    expect(out).toContain('[longrun] stopping the local redis-server');
    expect(out).toContain('STOPPED');
    expect(out).toContain('API DOWN');
    expect(out).toContain('REDIS DOWN');
    expect(out).toContain('appendonlydir');
  }, 150_000);

  it('stops everything it started when npm alone is told to stop (SIGTERM, as supervisors do)', () => {
    // npm passes SIGTERM to the shell it runs the script in, which exits without passing it on.
    const out = startAndStop('kill -TERM $pid');
    expect(out).toMatch(/RESULT 202 /);
    expect(out).toContain('STOPPED');
    expect(out).toContain('API DOWN');
    expect(out).toContain('REDIS DOWN');
    expect(out).toContain('[longrun] stopping the local redis-server');
  }, 150_000);
});
