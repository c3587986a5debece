// The Lua half of the BullMQ adapter (bullmq-adapter.ts, which re-exports it and is what the
// rest of the engine imports): kept apart only so that neither file passes 350 lines.

/**
 * Lua defining `bullmq_quick_add(tag, keys, argv, priority, fresh)`: what BullMQ's standard and
 * prioritized add scripts store for a job with its own id and no parent, repeat or deduplication
 * (every job a create adds), written out once instead of run through BullMQ's script, whose body
 * defines some thirty functions again at every add, unpacks two msgpack arguments and encodes
 * the options as JSON (decision 69). The queue's settings it reads (the events' cap, paused or at
 * its concurrency) and its marker are read and written once per queue and script call: nothing
 * else writes them during the call. `priority` (a number, or nil) replaces the options' priority,
 * as `set_fair_priority` would.
 *
 * Tags `s` and `p` take BullMQ's own arguments (`captureAdd`); `S` and `P` take them as
 * `quickAdd` encodes them, with no msgpack: `argv[1]` `<timestamp> <priority> <job id> <name>`,
 * `argv[2]` the data as JSON, `argv[3]` the options as BullMQ stores them, without `priority`
 * (added here when above 0). A job id already taken is answered as BullMQ's add answers it (a
 * `duplicated` event, nothing else written) for `S` and `P`, unless `fresh` says the id is new
 * (a create adds its job only with a record it just made, so no check is needed); for `s` and
 * `p` it, and any other add, returns false: the caller runs BullMQ's own script. `bullmq-adapter.test.ts` compares
 * what each way stores with what BullMQ's own add stores.
 */
export const BULLMQ_QUICK_ADD_LUA = `local quick_queues = {}
local function bullmq_quick_queue(meta, active)
  local q = quick_queues[meta]
  if q then return q end
  local max_events = redis.call('HGET', meta, 'opts.maxLenEvents')
  if not max_events then
    max_events = 10000
    redis.call('HSET', meta, 'opts.maxLenEvents', max_events)
  end
  local attrs = redis.call('HMGET', meta, 'paused', 'concurrency')
  local held = false
  if attrs[1] then held = true
  elseif attrs[2] then held = redis.call('LLEN', active) >= tonumber(attrs[2]) end
  q = {max_events = max_events, held = held, marked = false}
  quick_queues[meta] = q
  return q
end
local function bullmq_quick_add(tag, keys, argv, priority, fresh)
  local standard = tag == 's' or tag == 'S'
  local encoded = tag == 'S' or tag == 'P'
  if not standard and not encoded and tag ~= 'p' then return false end
  local marker, meta, id_key, active, events
  if standard then
    meta, id_key, active, events, marker = keys[3], keys[4], keys[7], keys[8], keys[9]
  else
    marker, meta, id_key, active, events = keys[1], keys[2], keys[3], keys[7], keys[8]
  end
  local id, name, timestamp, opts, p, lifo, delay, job_key
  if encoded then
    local ts, pr, jid, nm = string.match(argv[1], '^(%d+) (%d+) (%S+) (.+)$')
    if not ts then error('bullmq_quick_add: arguments not as quickAdd encodes them') end
    id, name, timestamp, delay = jid, nm, tonumber(ts), 0
    p = priority or tonumber(pr)
    opts = argv[3]
    if p > 0 then opts = string.sub(opts, 1, -2) .. ',"priority":' .. string.format('%d', p) .. '}' end
    job_key = string.sub(meta, 1, #meta - 4) .. id
    if not fresh and redis.call('EXISTS', job_key) == 1 then
      redis.call('INCR', id_key)
      local q = bullmq_quick_queue(meta, active)
      redis.call('XADD', events, 'MAXLEN', '~', q.max_events, '*', 'event', 'duplicated', 'jobId', id)
      return true
    end
  else
    local args = cmsgpack.unpack(argv[1])
    id = args[2]
    if not id or id == '' or args[5] ~= nil or args[7] ~= nil or args[8] ~= nil or args[9] ~= nil then
      return false
    end
    job_key = args[1] .. id
    if redis.call('EXISTS', job_key) == 1 then return false end
    local o = cmsgpack.unpack(argv[3])
    if o['de'] ~= nil then return false end
    if priority then o['priority'] = priority end
    name, timestamp, p, lifo, delay = args[3], args[4], o['priority'] or 0, o['lifo'], o['delay'] or 0
    opts = cjson.encode(o)
  end
  redis.call('INCR', id_key)
  local q = bullmq_quick_queue(meta, active)
  redis.call('HMSET', job_key, 'name', name, 'data', argv[2], 'opts', opts,
    'timestamp', timestamp, 'delay', delay, 'priority', p)
  redis.call('XADD', events, '*', 'event', 'added', 'jobId', id, 'name', name)
  if standard then
    redis.call(lifo and 'RPUSH' or 'LPUSH', keys[1], id)
  else
    local counter = redis.call('INCR', keys[9])
    redis.call('ZADD', keys[4], p * 0x100000000 + counter % 0x100000000, id)
  end
  if not q.held and not q.marked then
    redis.call('ZADD', marker, 0, '0')
    q.marked = true
  end
  redis.call('XADD', events, 'MAXLEN', '~', q.max_events, '*', 'event', 'waiting', 'jobId', id)
  return true
end
`;

/**
 * A prioritized job's score is its priority times this, plus a counter below it (2³²). The
 * fair-share Lua (decision 53) reads and rewrites scores with it (its `P32`).
 */
export const PRIORITY_SCORE_SHIFT = 4294967296;

/** The highest priority BullMQ accepts (2²¹ - 1: `Job` refuses more, and 2²¹ × 2³² is past a double's exact integers). */
export const BULLMQ_MAX_PRIORITY = 2097151;

/**
 * Lua for scripts that reorder BullMQ's prioritized set (the fair-share Lua, decision 53):
 * `BULLMQ_P32`, the score's priority shift, `BULLMQ_MAX_PRIORITY`, and
 * `bullmq_reprioritize(prioritized, id, score, priority)`, which moves a queued job to another
 * priority keeping its counter, in the set and in the job's hash (whose `priority` field BullMQ
 * re-adds a retried job with).
 */
export const BULLMQ_PRIORITIZED_LUA = `local BULLMQ_P32, BULLMQ_MAX_PRIORITY = ${PRIORITY_SCORE_SHIFT}, ${BULLMQ_MAX_PRIORITY}
local function bullmq_reprioritize(prioritized, id, score, priority)
  local counter = score - math.floor(score / BULLMQ_P32) * BULLMQ_P32
  redis.call('ZADD', prioritized, string.format('%.0f', priority * BULLMQ_P32 + counter), id)
  redis.call('HSET', string.sub(prioritized, 1, #prioritized - #'prioritized') .. id, 'priority', priority)
end
`;
