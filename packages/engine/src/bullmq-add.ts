import { createRequire } from 'node:module';
import { Job, RedisQueueBackend, type JobsOptions, type Queue } from 'bullmq';

/**
 * BullMQ's add of a job, run inside longrun's create script (decision 39): the task's record and
 * its job are written by one script call instead of two round trips. Nothing of BullMQ is copied:
 * the Lua is the installed BullMQ's own add scripts (`addStandardJob`, `addPrioritizedJob`,
 * `addDelayedJob`, read from the package at start-up, so an upgrade brings its own), each wrapped
 * in a function of its KEYS and ARGV; their arguments are built by BullMQ's own code
 * (`Job.addJob`) on a client that records the command instead
 * of sending it. What longrun adds: under fair share the job's priority is only known in the
 * script, so the script sets it in the job's options before BullMQ's add runs.
 *
 * Any other add (a parent job, or an installed BullMQ whose scripts are not found) is not
 * captured (`captureAdd` gives `undefined`) and goes out as a plain `Queue.add` after the create.
 */

/** The add scripts a create can run, by BullMQ's command name: their tag in the create's args. */
const SCRIPTS = { addStandardJob: 's', addPrioritizedJob: 'p', addDelayedJob: 'd' } as const;
type ScriptName = keyof typeof SCRIPTS;
export type AddTag = (typeof SCRIPTS)[ScriptName];

/** At most this many keys per add script (the delayed one's are padded to it). */
export const ADD_KEYS = 9;

interface BullScript {
  name: string;
  content: string;
  keys: number;
}

function loadScripts(): Map<ScriptName, BullScript> | undefined {
  try {
    const all = createRequire(import.meta.url)('bullmq/dist/cjs/scripts/index.js') as Record<
      string,
      BullScript | undefined
    >;
    const found = new Map<ScriptName, BullScript>();
    for (const name of Object.keys(SCRIPTS) as ScriptName[]) {
      const script = all[name];
      if (!script?.content || !(script.keys <= ADD_KEYS)) return undefined;
      found.set(name, script);
    }
    return found;
  } catch {
    return undefined;
  }
}

const scripts = loadScripts();

/**
 * Lua defining `bullmq_add(tag, keys, argv)`: BullMQ's add script of that tag run on those KEYS
 * and ARGV (its `return`s return from the function). Empty when BullMQ's scripts were not found.
 */
export const BULLMQ_ADD_LUA = scripts
  ? [...scripts]
      .map(([name, s]) => `local function bullmq_${SCRIPTS[name]}(KEYS, ARGV)\n${s.content}\nend\n`)
      .join('') +
    `local BULLMQ_ADDS = {${Object.values(SCRIPTS)
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

/**
 * Lua defining `set_fair_priority(opts, priority)`: BullMQ's packed options with the placeholder
 * priority replaced (in place when its five bytes are found, by unpack and repack otherwise).
 */
export const SET_FAIR_PRIORITY_LUA = `local FAIR_PLACEHOLDER = '\\168priority\\206\\0\\31\\255\\255'
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

/** A job's add as BullMQ built it: which script, its keys, and its three arguments. */
export interface JobAdd {
  tag: AddTag;
  /** The script's keys, padded to `ADD_KEYS` with its first. */
  keys: string[];
  /** Packed arguments, the data as JSON, packed options (BullMQ's encoding). */
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
  return { tag: SCRIPTS[command], keys, args: [packed, jobData, packedOpts] };
}
