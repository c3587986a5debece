import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Job, RedisQueueBackend, type JobsOptions, type Queue } from 'bullmq';

import { BULLMQ_MAX_PRIORITY, PRIORITY_SCORE_SHIFT } from './bullmq-adapter-lua.js';

export {
  BULLMQ_MAX_PRIORITY,
  BULLMQ_PRIORITIZED_LUA,
  BULLMQ_QUICK_ADD_LUA,
  PRIORITY_SCORE_SHIFT,
} from './bullmq-adapter-lua.js';

/**
 * The one module that touches BullMQ's internals (decisions 39 and 55): everything else in the
 * engine uses BullMQ's public API or this. What it relies on, all pinned by
 * `bullmq-adapter.test.ts` against the installed version (`BULLMQ_VERIFIED_VERSION`):
 *
 * - **The add in the create** (decision 39): the task's record and its job are written by one
 *   script call instead of two round trips. A standard or prioritized job (every job a create
 *   adds but a delayed one) is written by `bullmq_quick_add` (bullmq-adapter-lua.ts) on
 *   arguments `quickAdd` builds: what BullMQ's add script stores, written out once (decision 69;
 *   the pinned test compares every key it writes with BullMQ's). Any other runs the installed
 *   BullMQ's own add scripts (`addStandardJob`, `addPrioritizedJob`, `addDelayedJob`, read from
 *   the package at start-up), each wrapped in a function of its KEYS and ARGV, on arguments
 *   BullMQ's own code builds (`Job.addJob`) on a client that records the command instead of
 *   sending it. Under fair share the job's priority is only known in the script, so the script
 *   sets it in the job's options before the add.
 * - **Key names** of a queue's internal sets and job hashes (the reconciler reads them; the fair
 *   share script reorders the prioritized set).
 * - **Score encodings**: a delayed job's score is its due time × 0x1000 (plus a counter), a
 *   prioritized job's is priority × 2³² plus a counter.
 *
 * Any other add (a parent job, or an installed BullMQ whose scripts are not found or changed
 * shape) is not captured (`captureAdd` gives `undefined`) and goes out as BullMQ's public
 * `Queue.add` after the create, which costs a second command (decision 59).
 */

/** The BullMQ version this module was checked against; the pinned test fails on any other. */
export const BULLMQ_VERIFIED_VERSION = '6.7.0';

const requireHere = createRequire(import.meta.url);

/** The installed BullMQ's version, from its package.json. */
export function installedBullmqVersion(): string {
  const main = requireHere.resolve('bullmq');
  // dist/cjs/index.js (or dist/esm) → the package root holding package.json.
  let dir = dirname(main);
  while (!dir.endsWith('bullmq') && dirname(dir) !== dir) dir = dirname(dir);
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string };
  return pkg.version;
}

/** Where BullMQ keeps its Lua, as the package ships it. */
export const BULLMQ_SCRIPTS_MODULE = 'bullmq/dist/cjs/scripts/index.js';

/** The add scripts a create can run, by BullMQ's command name: their tag in the create's args. */
export const ADD_SCRIPTS = {
  addStandardJob: 's',
  addPrioritizedJob: 'p',
  addDelayedJob: 'd',
} as const;
type ScriptName = keyof typeof ADD_SCRIPTS;
export type AddTag = (typeof ADD_SCRIPTS)[ScriptName];

/** At most this many keys per add script (the delayed one's are padded to it). */
export const ADD_KEYS = 9;

export interface BullScript {
  name: string;
  content: string;
  keys: number;
}

/**
 * What is wrong with BullMQ's scripts module for the add in the create (empty: nothing): each
 * add script must be there, with its Lua, taking at most `ADD_KEYS` keys.
 */
export function addScriptProblems(all: Record<string, unknown>): string[] {
  const problems: string[] = [];
  for (const name of Object.keys(ADD_SCRIPTS)) {
    const script = all[name] as Partial<BullScript> | undefined;
    if (!script) problems.push(`${name}: not in ${BULLMQ_SCRIPTS_MODULE}`);
    else if (typeof script.content !== 'string' || !script.content) {
      problems.push(`${name}: no Lua content`);
    } else if (typeof script.keys !== 'number' || !(script.keys <= ADD_KEYS)) {
      problems.push(`${name}: takes ${String(script.keys)} keys, more than ADD_KEYS (${ADD_KEYS})`);
    }
  }
  return problems;
}

function loadScripts(): Map<ScriptName, BullScript> | undefined {
  try {
    const all = requireHere(BULLMQ_SCRIPTS_MODULE) as Record<string, BullScript>;
    if (addScriptProblems(all).length > 0) return undefined;
    return new Map(Object.keys(ADD_SCRIPTS).map((n) => [n as ScriptName, all[n]!]));
  } catch {
    return undefined;
  }
}

const scripts = loadScripts();

/** Whether jobs are added in the create (BullMQ's scripts found); otherwise by `Queue.add`. */
export const ADD_IN_CREATE = scripts !== undefined;

/**
 * Lua defining `bullmq_add(tag, keys, argv)`: BullMQ's add script of that tag run on those KEYS
 * and ARGV (its `return`s return from the function). Empty when BullMQ's scripts were not found.
 */
export const BULLMQ_ADD_LUA = scripts
  ? [...scripts]
      .map(
        ([name, s]) =>
          `local function bullmq_${ADD_SCRIPTS[name]}(KEYS, ARGV)\n${s.content}\nend\n`,
      )
      .join('') +
    `local BULLMQ_ADDS = {${Object.values(ADD_SCRIPTS)
      .map((tag) => `${tag} = bullmq_${tag}`)
      .join(', ')}}
local function bullmq_add(tag, keys, argv)
  return BULLMQ_ADDS[tag](keys, argv)
end
`
  : '';

/**
 * The priority a fair-share job is built with (`TaskQueue.prepare`) until the create script sets
 * the tenant's turn: a value msgpack writes in five bytes (0xce and four), so that the script can
 * overwrite those bytes in BullMQ's packed options instead of unpacking and repacking them
 * (~10 µs of Redis per submit on a slow host); any priority is a valid uint32 there. Only a
 * job prepared under fair share carries it, and its create always replaces it.
 */
export const FAIR_PRIORITY_PLACEHOLDER = 0x1fffff;

/** The placeholder as BullMQ's msgpack writes it: the key `priority` (fixstr), 0xce, four bytes. */
export const FAIR_PLACEHOLDER_BYTES = Buffer.from([
  0xa8,
  ...Buffer.from('priority'),
  0xce,
  0x00,
  0x1f,
  0xff,
  0xff,
]);

/** A Lua string literal of these bytes: letters as they are, any other byte as `\ddd`. */
function luaBytes(bytes: Buffer): string {
  return [...bytes]
    .map((b) => (/[a-z]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `\\${b}`))
    .join('');
}

/**
 * Lua defining `set_fair_priority(opts, priority)`: BullMQ's packed options with the placeholder
 * priority replaced (in place when its five bytes are found, by unpack and repack otherwise).
 */
export const SET_FAIR_PRIORITY_LUA = `local FAIR_PLACEHOLDER = '${luaBytes(FAIR_PLACEHOLDER_BYTES)}'
local function set_fair_priority(opts, priority)
  local at = string.find(opts, FAIR_PLACEHOLDER, 1, true)
  if at then
    local n = math.floor(priority)
    return string.sub(opts, 1, at + 9) .. string.char(math.floor(n / 16777216) % 256,
      math.floor(n / 65536) % 256, math.floor(n / 256) % 256, n % 256) .. string.sub(opts, at + 14)
  end
  local o = cmsgpack.unpack(opts)
  o['priority'] = priority
  return cmsgpack.pack(o)
end
`;

/**
 * A job's add: which script (`AddTag`, BullMQ's, with BullMQ's arguments; `S` or `P`, the
 * standard or prioritized add of `bullmq_quick_add`, with `quickAdd`'s), its keys, and its
 * three arguments.
 */
export interface JobAdd {
  tag: AddTag | 'S' | 'P';
  /** The script's keys, padded to `ADD_KEYS` with its first. */
  keys: string[];
  /** Packed arguments, the data as JSON, packed options (BullMQ's encoding; see `JobAdd.tag`). */
  args: [Buffer | string, string, Buffer | string];
}

/** Records the one command `Job.addJob` sends, instead of sending it. */
class Recorder {
  command: string | undefined;
  args: unknown[] = [];

  runCommand(command: string, args: unknown[]): Promise<string> {
    this.command = command;
    this.args = args;
    return Promise.resolve('0'); // what a new job's id would be: not an error code
  }
}

/**
 * The add `queue.add(name, data, opts)` would send, built by BullMQ and not sent; `undefined` when
 * it cannot run in a create (see the module comment). `opts.jobId` must be set.
 *
 * @example
 * const add = captureAdd(queue, 'echo', { tenant: 't' }, { jobId: id }); // { tag: 's', keys, args }
 */
export function captureAdd(
  queue: Queue,
  name: string,
  data: unknown,
  opts: JobsOptions & { jobId: string },
): JobAdd | undefined {
  const backend = queue.backend as unknown;
  if (!scripts || !(backend instanceof RedisQueueBackend)) return undefined;
  const recorder = new Recorder();
  // BullMQ's own add on the recorder: it validates the options and builds the command before
  // its first await, so the command is recorded when this returns; its promise is moot.
  new Job(queue, name, data, opts, opts.jobId).addJob(recorder as never).catch(() => undefined);
  const command = (recorder.command ?? '').split(':')[0] as ScriptName;
  const script = scripts.get(command);
  if (!script || recorder.args.length !== script.keys + 3) return undefined;
  const keys = recorder.args.slice(0, script.keys) as string[];
  while (keys.length < ADD_KEYS) keys.push(keys[0]!);
  const [packed, jobData, packedOpts] = recorder.args.slice(script.keys) as JobAdd['args'];
  return { tag: ADD_SCRIPTS[command], keys, args: [packed, jobData, packedOpts] };
}

/** The options `quickAdd` writes out itself: any other one goes through BullMQ's own add. */
const QUICK_OPTS = new Set([
  'jobId',
  'priority',
  'attempts',
  'backoff',
  'removeOnComplete',
  'removeOnFail',
  'timestamp',
]);
const addKeys = new WeakMap<Queue, { s?: string[]; p?: string[] }>();

/** The keys BullMQ's standard (`s`) or prioritized (`p`) add of `queue` takes, recorded once. */
function keysOf(queue: Queue, kind: 's' | 'p'): string[] | undefined {
  let known = addKeys.get(queue);
  if (!known) addKeys.set(queue, (known = {}));
  if (!known[kind]) {
    const sample = { jobId: 'quick-keys', ...(kind === 'p' ? { priority: 1 } : {}) };
    const add = captureAdd(queue, 'quick-keys', {}, sample);
    if (add?.tag !== kind) return undefined;
    known[kind] = add.keys;
  }
  return known[kind];
}

/**
 * The add `queue.add(name, data, opts)` would send, for `bullmq_quick_add` (tags `S` and `P`):
 * the job as BullMQ's `Job` would store it (its options with `attempts` defaulted, the data as
 * JSON, the time now), built here without BullMQ's `Job` and msgpack, which a submit's API paid
 * for and the create's Lua unpacked again (decision 69). `undefined` for any job with an option
 * other than `QUICK_OPTS`, a delay, or what BullMQ's own checks refuse (an id that is an integer
 * or holds ':', a priority not an integer up to `BULLMQ_MAX_PRIORITY`): `captureAdd` takes it.
 */
export function quickAdd(
  queue: Queue,
  name: string,
  data: unknown,
  opts: JobsOptions & { jobId: string },
): JobAdd | undefined {
  if (!scripts || !(queue.backend instanceof RedisQueueBackend)) return undefined;
  for (const [option, value] of Object.entries(opts)) {
    if (value !== undefined && !QUICK_OPTS.has(option)) return undefined;
  }
  const { jobId, priority = 0, backoff, timestamp } = opts;
  if (!/^\S+$/.test(jobId) || jobId.includes(':') || `${parseInt(jobId, 10)}` === jobId) {
    return undefined;
  }
  // A priority of 0 given is kept in BullMQ's options (and none is not): left to BullMQ.
  if (!Number.isInteger(priority) || priority < 0 || priority > BULLMQ_MAX_PRIORITY) {
    return undefined;
  }
  if (opts.priority === 0) return undefined;
  if (backoff !== undefined && (typeof backoff !== 'object' || backoff === null)) return undefined;
  if (!name || (timestamp !== undefined && !Number.isInteger(timestamp))) return undefined;
  const kind = priority > 0 ? 'p' : 's';
  const keys = keysOf(queue, kind);
  if (!keys) return undefined;
  const { priority: _set, ...stored } = opts;
  return {
    tag: kind === 'p' ? 'P' : 'S',
    keys,
    args: [
      `${timestamp || Date.now()} ${priority} ${jobId} ${name}`,
      JSON.stringify(data === undefined ? {} : data),
      JSON.stringify({ attempts: 0, ...stored }),
    ],
  };
}

/** The Redis keys of a queue's internal sets and job hashes, as BullMQ names them. */
export interface QueueKeys {
  /** A job's hash (its `data`, `opts`, `priority`, …). */
  job(id: string): string;
  /** Prioritized jobs, scored by `prioritizedScore`; a job's hash is `job(id)`, same prefix. */
  prioritized: string;
  /** Delayed jobs, scored by due time (see `delayedDueAt`). */
  delayed: string;
  /** Jobs waiting in arrival order (a list). */
  wait: string;
}

/**
 * A queue's keys.
 *
 * @example
 * queueKeys(queue).prioritized // '<prefix>:tasks.echo:prioritized'
 */
export function queueKeys(queue: Queue): QueueKeys {
  return {
    job: (id) => queue.toKey(id),
    prioritized: queue.toKey('prioritized'),
    delayed: queue.toKey('delayed'),
    wait: queue.toKey('wait'),
  };
}

/** A delayed job's score is its due time times this, plus a counter below it. */
export const DELAYED_SCORE_SHIFT = 0x1000;

/**
 * When a delayed job is due (ms since the epoch), from its score in the delayed set.
 *
 * @example
 * delayedDueAt(await redis.zscore(queueKeys(queue).delayed, id)) // 1767225600000
 */
export function delayedDueAt(score: number | string): number {
  return Math.floor(Number(score) / DELAYED_SCORE_SHIFT);
}

/**
 * A prioritized job's priority, from its score in the prioritized set.
 *
 * @example
 * prioritizedPriority(3 * 2 ** 32 + 17) // 3
 */
export function prioritizedPriority(score: number | string): number {
  return Math.floor(Number(score) / PRIORITY_SCORE_SHIFT);
}
