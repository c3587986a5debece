// State shared by the parts of one benchmark run: the Redis it uses, progress lines, warnings,
// and the load runs every part makes.
import { withCpu } from './cpu.mjs';
import { auth, C, jsonAuth, SUBMIT_BODY } from './config.mjs';
import { load } from './services.mjs';

export const ctx = {
  started: Date.now(),
  /** The benchmark's own connection (never used while a timed run counts commands). */
  redis: undefined,
  redisUrl: undefined,
  /** pid of the private redis-server (its CPU time is reported), if there is one. */
  redisPid: undefined,
  /** Scratch directory of the run (id files, profiles). */
  tmp: undefined,
  warnings: [],
};

export const sum = (xs) => xs.reduce((a, b) => a + b, 0);

export function say(msg) {
  const s = String(Math.round((Date.now() - ctx.started) / 1000)).padStart(4);
  console.log(`[${s}s] ${msg}`);
}

export function warn(msg) {
  ctx.warnings.push(msg);
  say(`WARNING: ${msg}`);
}

export const indexKey = (prefix) => `${prefix}:tenant:bench:tasks`;

/** Options for load-child.mjs: submits of the echo job. */
export const post = (target, extra) => ({
  url: `${target.base}/v1/jobs`,
  method: 'POST',
  headers: jsonAuth,
  body: SUBMIT_BODY,
  connections: C.connections,
  ...extra,
});

/** Options for load-child.mjs: polls of the task ids listed in `file`. */
export const poll = (target, file, extra) => ({
  url: `${target.base}/v1/jobs/x`,
  headers: auth,
  idsFile: file,
  pathTemplate: '/v1/jobs/{id}',
  connections: C.connections,
  ...extra,
});

/** Warns when a load run got anything but `expectStatus`. */
export function checkLoad(what, r, expectStatus) {
  const ok = r.statusCodes?.[expectStatus]?.count ?? 0;
  if (ok !== r.total || r.errors > 0 || r.timeouts > 0) {
    warn(
      `${what}: ${r.total} answers, ${ok} × ${expectStatus}, others ${JSON.stringify(r.statusCodes)}, errors ${r.errors}, timeouts ${r.timeouts}`,
    );
  }
  return r;
}

/** Runs a load against `target`, adding the CPU µs per request of its process and of Redis. */
export async function loadWithCpu(target, options) {
  const pids = [target.child.pid, ctx.redisPid].filter(Boolean);
  const { result, cpu } = await withCpu(pids, () => load(options));
  const n = result.sent || result.total;
  result.cpuUs = (cpu[0] * 1e6) / n;
  result.redisUs = ctx.redisPid ? (cpu[1] * 1e6) / n : NaN;
  return result;
}
