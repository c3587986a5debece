import { FIELD as F, LIFECYCLE, TERMINAL_STATUSES } from '@longrun/core';
import { ADD_KEYS, BULLMQ_ADD_LUA, SET_FAIR_PRIORITY_LUA } from './bullmq-adapter.js';
import { taskKeys } from './keys.js';

/** What follows the prefix in a task's key and in a schedule's (`<prefix>:task:<id>`, …). */
const TASK_INFIX = taskKeys('').task('');
const SCHEDULE_INFIX = taskKeys('').schedule('');

/** A Lua table literal `{['a'] = true, …}` of the given statuses. */
function luaSet(statuses: readonly string[]): string {
  return `{${statuses.map((s) => `['${s}'] = true`).join(', ')}}`;
}

/** Lua constants every script shares: the terminal statuses, from core's one list. */
const COMMON = `
local TERMINAL = ${luaSet(TERMINAL_STATUSES)}

-- A tenant's storage budget (decision 31): \`usage\` is a hash of task id -> bytes with the total
-- under '#total', \`usage .. '-exp'\` the same ids by expiry time. Only tasks created under a
-- budget are in it; adding to or releasing an untracked task does nothing.
local function usage_add(usage, id, bytes)
  if bytes > 0 and redis.call('HEXISTS', usage, id) == 1 then
    redis.call('HINCRBY', usage, id, bytes)
    redis.call('HINCRBY', usage, '#total', bytes)
  end
end

-- The id leaves the expiry set even without bytes in the hash (as TENANT_USAGE does): a stray
-- entry there would come back first at every submit's prune and hold its place forever.
local function usage_release(usage, id)
  local bytes = redis.call('HGET', usage, id)
  if bytes then
    redis.call('HINCRBY', usage, '#total', -tonumber(bytes))
    redis.call('HDEL', usage, id)
  end
  redis.call('ZREM', usage .. '-exp', id)
end
`;

/**
 * Lua scripts for longrun's task records. Field names come from core's record codec (`FIELD`) and
 * guards from its lifecycle table, so neither is kept here by hand a second time. Each runs atomically in Redis, so a transition and its
 * guard ("not already terminal") can never interleave with another writer, and every change is
 * appended to the task's event list (for SSE) and, when the status changed and the task has a
 * callback, to the webhook outbox, in the same step.
 */

/**
 * Appends an event to a task's event list; shared by start and transition. Events are numbered
 * by the record's `seq` field (1, 2, …: the SSE event ids) and kept in a plain list capped at
 * 1 000 entries. A list, not a stream: Redis 7 gives every stream node a 4 KiB listpack up front,
 * which would multiply the memory of a small task.
 *
 * Event 1 (the task as created) is not written by the create: until the first change the record
 * itself is that state (`TaskLog` reads it from there). The first change writes it to the list
 * (`seed_events`), from the state it read before writing its own, and the list is made then.
 *
 * `push_event` is given the state the record now has (its callers know it: they just wrote it),
 * so the record is not read back; `append_event` reads it, for callers that do not.
 */
const APPEND_EVENT = `${COMMON}
local function event_entry(seq, st, msg, progress, updated)
  local entry = {s = seq, st = st, m = msg or '', u = tonumber(updated) or 0}
  if progress and progress ~= '' then entry.p = progress end
  return cjson.encode(entry)
end

-- Before event 2: event 1 from the state the task was created with (a task an older version
-- created has it in its list already). The list expires with the task (later pushes keep that
-- expiry; keys are never evicted alone, since Redis runs with noeviction, as BullMQ requires).
local function seed_events(task, events, st, msg, progress, updated)
  if redis.call('EXISTS', events) == 1 then return end
  redis.call('RPUSH', events, event_entry(1, st, msg, progress, updated))
  local pttl = redis.call('PTTL', task)
  if pttl > 0 then redis.call('PEXPIRE', events, pttl) end
end

local function push_event(task, events, outbox, channel, id, previous, seq, st, msg, progress, updated, callback)
  redis.call('RPUSH', events, event_entry(seq, st, msg, progress, updated))
  if seq > 1000 then redis.call('LTRIM', events, -1000, -1) end
  if st ~= previous and callback and callback ~= '' then
    redis.call('XADD', outbox, '*', 'task', id, 'event', tostring(seq))
  end
  redis.call('PUBLISH', channel .. id, tostring(seq))
  return tostring(seq)
end

-- A completed task's numeric progress (a percent) reads 100: done is done, whatever the handler
-- last reported (issue 27). An object is the handler's own shape, which longrun cannot finish,
-- and no progress stays none. Returns the progress to write, or nil to leave it.
local COMPLETED = '${LIFECYCLE.complete.to}'
local function done_progress(st, progress)
  if st == COMPLETED and progress and progress ~= '100' and tonumber(progress) then return '100' end
  return nil
end

local function append_event(task, events, outbox, channel, id, previous)
  local snap = redis.call('HMGET', task, '${F.status}', '${F.statusMessage}', '${F.progress}', '${F.updatedAt}', '${F.callback}')
  local seq = redis.call('HINCRBY', task, '${F.seq}', 1)
  return push_event(task, events, outbox, channel, id, previous, seq, snap[1], snap[2], snap[3], snap[4], snap[5])
end
`;

/**
 * Stores a new task: claims its idempotency key and checks the tenant's open-task cap first.
 * `fields` is a JSON array [field, value, …] of strings: one argument instead of thirty, because
 * the API builds and writes each argument of a command one by one, and decoding the array here
 * costs Redis less than that costs the API (decision 21). Returns 'ok' ('ok <priority>' under
 * fair share), 'dup <idempotencyValue>', 'full <openTasks>', 'over <usedBytes> <retryAfterMs>'
 * or 'gone' (the task names a schedule that was deleted: a tick racing the delete).
 */
const CREATE = `${COMMON}
-- Fair share (decision 33): the task's BullMQ priority is its tenant's virtual start time. \`fair\`
-- is a hash of tenant -> the tag of its last task on this queue, \`head\` the queue's prioritized
-- set (BullMQ scores it priority * 2^32 + a counter), whose first job stands for the virtual
-- time now (kept under '#v' for when the set is empty): the tag its priority was written for,
-- less its own offset (the task's \`priority\` - 1, read off its record). A tenant's next tag is
-- one step (1 / its weight) after its last, but never before now: one with a backlog keeps its
-- order, one that was idle joins the head. An empty set may only mean that the jobs of the last
-- creates are on their way: the clock starts over only once the queue has been empty with no
-- create for a second ('#at').
-- Tags only grow, and under steady traffic the queue is never empty for a second, so a priority
-- is written relative to a base ('#b': priority = tag - base + offset) that moves up with the
-- head (decision 53): once the head is REBASE_AT past the base, the base moves up to it, and the
-- jobs already queued move down as much, MIGRATE_PER_CALL per call from the head, so the order
-- of the queue never changes and the work per call stays bounded. While they move ('#nb' the
-- new base, '#f' the frontier), a priority under '#f' is already written for the new base.
-- What this call did already (a table per script run): each create of a call has the same \`now\`,
-- so the upkeep of a key (pruning, expiries, the head's virtual time, a tenant's tag) leaves the
-- same state done once per key in a call as once per task, and costs 8 commands less per task.
local once, virtual, tags, sweeps, index_until = {}, {}, {}, {}, {}
local function first_time(what, key)
  local k = what .. key
  if once[k] then return false end
  once[k] = true
  return true
end

local REBASE_AT, MIGRATE_PER_CALL, MAX_PRIORITY, P32 = 65536, 64, 2097152, 4294967296
local coords = {}
local function fair_coords(fair)
  local c = coords[fair]
  if c then return c end
  local got = redis.call('HMGET', fair, '#b', '#nb', '#f')
  c = {b = tonumber(got[1]) or 0, nb = tonumber(got[2]), f = tonumber(got[3])}
  if not (c.nb and c.f) then c.nb, c.f = nil, nil end
  coords[fair] = c
  return c
end

local function num(x) return string.format('%.0f', x) end

-- The base a queued priority was written for.
local function base_of(c, p)
  if c.nb and p < c.f then return c.nb end
  return c.b
end

-- Moves the next jobs not yet moved (from the frontier on, in queue order) down to the new base:
-- their score keeps its counter, their hash its priority (BullMQ re-adds a retried job with it).
-- Each moved priority ends under the new frontier, so no job moves twice.
local function migrate(fair, head, c)
  local d = c.nb - c.b
  local jobs = redis.call('ZRANGEBYSCORE', head, num(c.f * P32), '+inf', 'WITHSCORES', 'LIMIT', 0, MIGRATE_PER_CALL)
  local job_prefix = string.sub(head, 1, #head - #'prioritized')
  local last = c.f
  for i = 1, #jobs, 2 do
    local score = tonumber(jobs[i + 1])
    local p = math.floor(score / P32)
    local moved = math.max(p - d, 1)
    redis.call('ZADD', head, num(moved * P32 + (score - p * P32)), jobs[i])
    redis.call('HSET', job_prefix .. jobs[i], 'priority', moved)
    last = p
  end
  if #jobs < MIGRATE_PER_CALL * 2 then
    c.b, c.nb, c.f = c.nb, nil, nil
    redis.call('HSET', fair, '#b', num(c.b))
    redis.call('HDEL', fair, '#nb', '#f')
  else
    c.f = last
    redis.call('HSET', fair, '#f', num(last))
  end
end

local function head_time(fair, head, now_ms, task_prefix)
  if virtual[head] then return virtual[head] end
  local first = redis.call('ZRANGE', head, 0, 0, 'WITHSCORES')
  local c = fair_coords(fair)
  local v
  if first[2] then
    local own = tonumber(redis.call('HGET', task_prefix .. first[1], '${F.priority}') or '1') or 1
    local p = math.floor(tonumber(first[2]) / P32)
    v = base_of(c, p) + math.max(p - (own - 1), 0)
    redis.call('HSET', fair, '#v', num(v))
  else
    local at = redis.call('HGET', fair, '#at')
    if not at or tonumber(now_ms) - tonumber(at) > 1000 then
      redis.call('DEL', fair)
      c.b, c.nb, c.f = 0, nil, nil
      v = 0
    else
      v = tonumber(redis.call('HGET', fair, '#v') or '0')
    end
  end
  if not c.nb and v - c.b > REBASE_AT then
    c.nb, c.f = c.b + math.floor(v - c.b) - 1, 1
    redis.call('HSET', fair, '#nb', num(c.nb), '#f', '1')
  end
  if c.nb and first_time('migrate ', head) then migrate(fair, head, c) end
  virtual[head] = v
  return v
end

-- A tenant's index follows its tasks' own expiry (issue 27): each create adds INDEX_SWEEP to
-- what its index is swept by at the end of the call: the next entries after a cursor that walks
-- the index round and round (\`<index>-sweep\`) are looked at, and those whose record is gone
-- dropped, so the entries of expired or deleted tasks leave within (index size / INDEX_SWEEP)
-- creates, at a bounded cost per create; and the index key expires with its longest-lived task
-- (\`until_ms\`), so an idle tenant's is gone with its last task.
local INDEX_SWEEP = 3
local sweep_order = {}
local function plan_sweep(index, task_prefix, until_ms)
  local plan = sweeps[index]
  if not plan then
    plan = {index = index, prefix = task_prefix, n = 0}
    sweeps[index] = plan
    sweep_order[#sweep_order + 1] = plan
  end
  plan.n = plan.n + INDEX_SWEEP
  plan.until_ms = until_ms
end

local function finish_sweeps()
  for _, plan in ipairs(sweep_order) do
    local key = plan.index .. '-sweep'
    local cursor = redis.call('GET', key) or ''
    local from = '-'
    if cursor ~= '' then from = '(' .. cursor end
    local batch = redis.call('ZRANGEBYLEX', plan.index, from, '+', 'LIMIT', 0, plan.n)
    for _, member in ipairs(batch) do
      local colon = string.find(member, ':', 1, true)
      if colon and redis.call('EXISTS', plan.prefix .. string.sub(member, colon + 1)) == 0 then
        redis.call('ZREM', plan.index, member)
      end
    end
    if #batch < plan.n then cursor = '' else cursor = batch[#batch] end
    redis.call('SET', key, cursor, 'PXAT', plan.until_ms)
  end
end

-- The index key lives until its longest-lived task expires: PEXPIREAT only ever moves it later.
local function index_expiry(index, expires_at, now)
  local at = tonumber(expires_at)
  local known = index_until[index]
  if known == nil then
    local left = redis.call('PTTL', index)
    if left >= 0 then known = tonumber(now) + left else known = 0 end
  end
  if at > known then
    redis.call('PEXPIREAT', index, expires_at)
    known = at
  end
  index_until[index] = known
  return string.format('%d', known)
end

local function fair_priority(fair, head, tenant, step, offset, now_ms, task_prefix)
  local v = head_time(fair, head, now_ms, task_prefix)
  local k = fair .. ' ' .. tenant
  local last = tags[k] or tonumber(redis.call('HGET', fair, tenant) or '0')
  local tag = math.max(v, last + step)
  tags[k] = tag
  redis.call('HSET', fair, tenant, tostring(tag), '#at', now_ms)
  local c = fair_coords(fair)
  local priority = math.min(math.max(math.ceil(tag - c.b), 1) + offset, MAX_PRIORITY)
  -- Ahead of the frontier of a move under way: written for the new base, among the moved jobs.
  if c.nb and priority < c.f then priority = math.max(priority - (c.nb - c.b), 1) end
  return priority
end

-- A replay of an idempotency key (the same body) hands the key's task to another request: an
-- untouched one is marked, so that the create of a request that timed out does not take it back
-- (DISCARD_TASK). Only the first replay of a task not yet changed writes.
local function mark_replayed(task, id, existing, idem_value)
  local sp = string.find(existing, ' ', 1, true)
  local ours = string.find(idem_value, ' ', 1, true)
  if not sp or not ours or string.sub(existing, sp) ~= string.sub(idem_value, ours) then return end
  local other = string.sub(task, 1, #task - #id) .. string.sub(existing, 1, sp - 1)
  local cur = redis.call('HMGET', other, '${F.seq}', '${F.replayed}')
  if cur[1] == '1' and not cur[2] then redis.call('HSET', other, '${F.replayed}', '1') end
end

local function create(task, index, idem, open_set, usage, open_tenants, fair, head, expires_at, member, prune_bound, idem_value, index_ttl, id, cap, now, fields_json)
  if idem_value ~= '' then
    local existing = redis.call('GET', idem)
    if existing then
      mark_replayed(task, id, existing, idem_value)
      return 'dup ' .. existing
    end
  end
  -- Redis refuses a script past maxmemory only at its first write, and only if that write is
  -- one that can grow memory: so nothing before the first SET or HSET below writes (a prune
  -- would let the record, and the job after it, in past maxmemory). Open tasks are counted
  -- without those that expired unfinished, which the prune further down removes.
  local fields = cjson.decode(fields_json)
  local written = {}
  for i = 1, #fields, 2 do written[fields[i]] = fields[i + 1] end
  -- A schedule's tick (a task naming its schedule) is made only while the schedule exists, so
  -- none is made once its delete has answered. Ticks are placed on the schedules' own prefix.
  local schedule = written['${F.scheduleId}']
  if schedule and redis.call('EXISTS', string.sub(task, 1, #task - #id - ${TASK_INFIX.length}) .. '${SCHEDULE_INFIX}' .. schedule) == 0 then
    return 'gone'
  end
  local limits = {}
  for word in string.gmatch(cap, '%S+') do limits[#limits + 1] = tonumber(word) end
  local limit, budget, step, offset = limits[1], limits[2], limits[3], limits[4]
  if limit > 0 then
    local open = redis.call('ZCOUNT', open_set, '(' .. now, '+inf')
    if open >= limit then return 'full ' .. open end
  end
  if budget > 0 then
    -- Expired tasks give their bytes back here (at most 100 per submit).
    local expiring = usage .. '-exp'
    local gone = redis.call('ZRANGEBYSCORE', expiring, '-inf', now, 'LIMIT', 0, 100)
    for _, old in ipairs(gone) do usage_release(usage, old) end
    local used = tonumber(redis.call('HGET', usage, '#total') or '0')
    if used + #fields_json > budget then
      local first = redis.call('ZRANGE', expiring, 0, 0, 'WITHSCORES')
      local wait = first[2] and math.max(1000, tonumber(first[2]) - tonumber(now)) or 1000
      return 'over ' .. used .. ' ' .. wait
    end
  end
  if idem_value ~= '' then redis.call('SET', idem, idem_value, 'PXAT', expires_at) end
  redis.call('HSET', task, unpack(fields))
  redis.call('PEXPIREAT', task, expires_at)
  redis.call('ZADD', index, 0, member)
  if first_time('index ', index) then redis.call('ZREMRANGEBYLEX', index, prune_bound, '+') end
  plan_sweep(index, string.sub(task, 1, #task - #id), index_expiry(index, expires_at, now))
  -- Tasks that expired unfinished leave the tenant's open set here, cap or no cap.
  if first_time('prune ', open_set) then redis.call('ZREMRANGEBYSCORE', open_set, '-inf', now) end
  redis.call('ZADD', open_set, expires_at, id)
  if first_time('open ', open_set) then
    redis.call('PEXPIRE', open_set, index_ttl)
    -- The reconciler walks the open sets of these tenants (it drops a tenant whose set is gone).
    redis.call('ZADD', open_tenants, 0, written['${F.tenant}'])
  end
  if budget > 0 then
    redis.call('HSET', usage, id, #fields_json)
    redis.call('HINCRBY', usage, '#total', #fields_json)
    redis.call('ZADD', usage .. '-exp', expires_at, id)
    redis.call('PEXPIRE', usage, index_ttl)
    redis.call('PEXPIRE', usage .. '-exp', index_ttl)
  end
  if step > 0 then
    local priority = fair_priority(fair, head, written['${F.tenant}'], step, offset, now, string.sub(task, 1, #task - #id))
    return 'ok ' .. priority, priority
  end
  return 'ok'
end
`;

/**
 * KEYS: task, index, idempotency (or the task key when none), open-tasks set, usage (the
 * tenant's storage budget), the tenants with open tasks, fair-share tags and the queue's
 * prioritized set (both the task key when fair share is off).
 * ARGV: expiresAt, indexMember, pruneBound, idempotencyValue ('' = none), indexTtlMs, taskId,
 * limits (`<maxOpenTasks> <maxBytes> <fairStep> <priorityOffset>`, 0 = none), now, fields (a
 * JSON array, see CREATE).
 * Returns what `create` returns ('ok <priority>' under fair share).
 */
export const CREATE_TASK = `${CREATE}
local reply, priority = create(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[9])
finish_sweeps()
return reply
`;

/**
 * The creates of several tasks in one call (the submits an API process handled in one turn), each
 * on its own and in order, as by CREATE_TASK: a later one sees the idempotency keys and open
 * tasks of the earlier ones. A task created here may have its BullMQ job added in the same step,
 * by BullMQ's own add script (see bullmq-add.ts), after its record; under fair share the job's
 * priority is set in its options first.
 * KEYS: the tenants with open tasks, then for each task: task, index, idempotency (or the task
 * key), open set, usage, fair-share tags, prioritized set; then the jobs' key groups (ADD_KEYS
 * keys each: the queue keys of one add script, shared by the jobs of one queue).
 * ARGV: now, pruneBound, indexTtlMs, the number of tasks, then for each task: expiresAt,
 * indexMember, idempotencyValue, taskId, limits, fields, and its job: '' (none) or the add
 * script's tag and key group (`p1`), then BullMQ's three arguments (packed arguments, data,
 * packed options; '' when no job).
 * Returns one reply of `create` per task, in order.
 */
export const CREATE_MANY = `${CREATE}
${BULLMQ_ADD_LUA}
${SET_FAIR_PRIORITY_LUA}
local groups = {}
local function add_job(job, priority, base, packed, data, opts)
  local tag, g = string.sub(job, 1, 1), tonumber(string.sub(job, 2))
  local keys = groups[g]
  if not keys then
    keys = {}
    for j = 1, ${ADD_KEYS} do keys[j] = KEYS[base + (g - 1) * ${ADD_KEYS} + j] end
    groups[g] = keys
  end
  if priority then opts = set_fair_priority(opts, priority) end
  bullmq_add(tag, keys, {packed, data, opts})
end

local replies = {}
local n = tonumber(ARGV[4])
local base = 1 + n * 7
for i = 0, n - 1 do
  local k, a = 1 + i * 7, 4 + i * 10
  local reply, priority = create(KEYS[k + 1], KEYS[k + 2], KEYS[k + 3], KEYS[k + 4], KEYS[k + 5], KEYS[1], KEYS[k + 6], KEYS[k + 7],
    ARGV[a + 1], ARGV[a + 2], ARGV[2], ARGV[a + 3], ARGV[3], ARGV[a + 4], ARGV[a + 5], ARGV[1], ARGV[a + 6])
  if ARGV[a + 7] ~= '' and string.sub(reply, 1, 2) == 'ok' then
    add_job(ARGV[a + 7], priority, base, ARGV[a + 8], ARGV[a + 9], ARGV[a + 10])
  end
  replies[i + 1] = reply
end
finish_sweeps()
return replies
`;

/**
 * The guarded transition of one task: applies the fields unless the task is gone or the event's
 * guard refuses its status, or (`expect_seq`, '' for none) a change was recorded since the caller
 * read the record at that event number: an answer checked against the question asked then must
 * not land on a question asked since (issue 27).
 * `fields` is a list {field, value, …}. Returns {'ok', previousStatus, eventId},
 * {'refused', currentStatus}, {'changed', currentStatus} or {'missing'}.
 */
const TRANSITION = `${APPEND_EVENT}
local function transition(task, events, outbox, guard, append, channel, id, open_prefix, expect_seq, fields)
  -- One read of everything the guard, the open-task set and the event need; the event is then
  -- built from these values overlaid with the fields written, not read back.
  local cur = redis.call('HMGET', task, '${F.status}', '${F.tenant}', '${F.statusMessage}', '${F.progress}', '${F.updatedAt}', '${F.callback}', '${F.seq}')
  local status = cur[1]
  if not status then return {'missing'} end
  -- The event's guard (core's lifecycle table): the statuses it applies to, between spaces.
  if not string.find(guard, ' ' .. status .. ' ', 1, true) then return {'refused', status} end
  if expect_seq ~= '' and (cur[7] or '') ~= expect_seq then return {'changed', status} end
  if append ~= '' then
    local inputs = redis.call('HGET', task, '${F.inputs}') or '[]'
    if inputs == '[]' then inputs = '[' .. append .. ']' else inputs = string.sub(inputs, 1, -2) .. ',' .. append .. ']' end
    redis.call('HSET', task, '${F.inputs}', inputs)
  end
  local now, msg, progress, updated = status, cur[3], cur[4], cur[5]
  for i = 1, #fields, 2 do
    local f, v = fields[i], fields[i + 1]
    if f == '${F.status}' then now = v
    elseif f == '${F.statusMessage}' then msg = v
    elseif f == '${F.progress}' then progress = v
    elseif f == '${F.updatedAt}' then updated = v end
  end
  local done = done_progress(now, progress)
  if done then
    progress = done
    fields[#fields + 1] = '${F.progress}'
    fields[#fields + 1] = done
  end
  local seq = (tonumber(cur[7]) or 0) + 1
  fields[#fields + 1] = '${F.seq}'
  fields[#fields + 1] = tostring(seq)
  redis.call('HSET', task, unpack(fields))
  local added = #append
  for i = 1, #fields, 2 do
    if fields[i] == '${F.result}' then added = added + #fields[i + 1] end
  end
  usage_add(open_prefix .. cur[2] .. ':usage', id, added)
  if TERMINAL[now] then
    -- Same hash slot as the task key (one prefix), so this is cluster-safe.
    redis.call('ZREM', open_prefix .. cur[2] .. ':open', id)
  end
  if seq == 2 then seed_events(task, events, status, cur[3], cur[4], cur[5]) end
  local eid = push_event(task, events, outbox, channel, id, status, seq, now, msg, progress, updated, cur[6])
  return {'ok', status, eid}
end
`;

/**
 * KEYS: task, events, outbox.
 * ARGV: guard (`guardArg(event)`), inputToAppend ('' = none), channel, taskId, openSetPrefix (the
 * tenant's open-tasks set is `<openSetPrefix><tenant>:open`), expectedSeq ('' = any), field,
 * value, …
 * Returns what `transition` returns.
 */
export const TRANSITION_TASK = `${TRANSITION}
return transition(KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], {unpack(ARGV, 7)})
`;

/**
 * The completions of several jobs in one call (a worker's jobs that finish in the same turn): one
 * round trip and one script instead of one each, and of each job only its keys, id and result
 * travel (the status, message and time are shared). Each is guarded on its own, as in
 * TRANSITION_TASK, but without its general field handling: a completion knows what it writes
 * (and a numeric progress, finished at 100: done_progress), reads only the fields it needs, and
 * answers in one string (a worker drains thousands of
 * jobs a second, and each table built here, and each reply element parsed there, costs CPU on
 * both sides: see bench/analysis.md).
 * KEYS: outbox, then task and events of each job.
 * ARGV: channel, openSetPrefix, status, statusMessage, updatedAt, then for each job: taskId,
 * resultJson.
 * Returns one entry per job, in order, joined by ',': `ok <previous> <eventId>`, `missing` or
 * `refused <current>`.
 */
export const COMPLETE_MANY = `${APPEND_EVENT}
local CAN_COMPLETE = ${luaSet(LIFECYCLE.complete.from)}
local channel, open_prefix, st, msg, updated = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local replies = {}
for k = 2, #KEYS, 2 do
  local task, events, id, result = KEYS[k], KEYS[k + 1], ARGV[k + 4], ARGV[k + 5]
  local cur = redis.call('HMGET', task, '${F.status}', '${F.tenant}', '${F.progress}', '${F.callback}', '${F.seq}', '${F.statusMessage}', '${F.updatedAt}')
  local status = cur[1]
  if not status then
    replies[#replies + 1] = 'missing'
  elseif not CAN_COMPLETE[status] then
    replies[#replies + 1] = 'refused ' .. status
  else
    local seq = (tonumber(cur[5]) or 0) + 1
    -- Finished by its first change (no list yet): none is made. Event 1 goes into the record and
    -- event 2 is the record itself (TaskLog reads both from there); announced as push_event does.
    local lazy = seq == 2 and redis.call('EXISTS', events) == 0
    if seq == 2 and not lazy then seed_events(task, events, status, cur[6], cur[3], cur[7]) end
    if lazy then
      redis.call('HSET', task, '${F.status}', st, '${F.statusMessage}', msg, '${F.updatedAt}', updated, '${F.result}', result, '${F.seq}', '2',
        '${F.firstEvent}', event_entry(1, status, cur[6], cur[3], cur[7]))
    else
      redis.call('HSET', task, '${F.status}', st, '${F.statusMessage}', msg, '${F.updatedAt}', updated, '${F.result}', result, '${F.seq}', tostring(seq))
    end
    local progress = done_progress(st, cur[3])
    if progress then redis.call('HSET', task, '${F.progress}', progress) else progress = cur[3] end
    redis.call('ZREM', open_prefix .. cur[2] .. ':open', id)
    usage_add(open_prefix .. cur[2] .. ':usage', id, #result)
    local eid
    if lazy then
      if st ~= status and cur[4] and cur[4] ~= '' then
        redis.call('XADD', KEYS[1], '*', 'task', id, 'event', '2')
      end
      redis.call('PUBLISH', channel .. id, '2')
      eid = '2'
    else
      eid = push_event(task, events, KEYS[1], channel, id, status, seq, st, msg, progress, updated, cur[4])
    end
    replies[#replies + 1] = 'ok ' .. status .. ' ' .. eid
  end
end
return table.concat(replies, ',')
`;

/**
 * A worker taking a task: one round trip that checks it is still to be done, marks it running and
 * returns the whole record.
 * KEYS: task, events, outbox. ARGV: channel, taskId, field, value, …
 * Returns {'ok', {field, value, …}}, {'refused', status} or {'missing'}.
 */
export const START_TASK = `${APPEND_EVENT}
local CAN_START = ${luaSet(LIFECYCLE.start.from)}
local cur = redis.call('HMGET', KEYS[1], '${F.status}', '${F.statusMessage}', '${F.progress}', '${F.updatedAt}', '${F.seq}')
local status = cur[1]
if not status then return {'missing'} end
if not CAN_START[status] then return {'refused', status} end
if (tonumber(cur[5]) or 0) == 1 then seed_events(KEYS[1], KEYS[2], status, cur[2], cur[3], cur[4]) end
redis.call('HSET', KEYS[1], unpack(ARGV, 3))
append_event(KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2], status)
return {'ok', redis.call('HGETALL', KEYS[1])}
`;

/**
 * KEYS: task, index, idempotency (or the task key), events, usage. ARGV: indexMember,
 * dropIdempotency, taskId.
 * Deletes a terminal task and gives its bytes back to the tenant's budget. Returns
 * {'ok', status}, {'refused', status} or {'missing'}.
 */
export const FORGET_TASK = `${COMMON}
local status = redis.call('HGET', KEYS[1], '${F.status}')
if not status then return {'missing'} end
if not TERMINAL[status] then return {'refused', status} end
usage_release(KEYS[5], ARGV[3])
redis.call('DEL', KEYS[1], KEYS[4])
redis.call('ZREM', KEYS[2], ARGV[1])
if ARGV[2] == '1' then redis.call('DEL', KEYS[3]) end
return {'ok', status}
`;

/**
 * KEYS: task, index, idempotency (or the task key), events, open-tasks set, usage.
 * ARGV: indexMember, idempotencyValue, taskId.
 * Takes back a task whose create or job failed or timed out, and the idempotency key only if it
 * is still ours; but never a task another request may hold or that ran: one a replay of its key
 * handed out (marked by the create's `mark_replayed`) or with a change recorded (`seq` past 1: a
 * worker started, finished or failed it) is kept. Returns 'kept', 'discarded' or 'absent' (no
 * record: the create never landed, or was refused).
 */
export const DISCARD_TASK = `${COMMON}
local cur = redis.call('HMGET', KEYS[1], '${F.seq}', '${F.replayed}')
if cur[1] and (cur[1] ~= '1' or cur[2]) then return 'kept' end
usage_release(KEYS[6], ARGV[3])
redis.call('DEL', KEYS[1], KEYS[4])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[5], ARGV[3])
if ARGV[2] ~= '' and redis.call('GET', KEYS[3]) == ARGV[2] then redis.call('DEL', KEYS[3]) end
return cur[1] and 'discarded' or 'absent'
`;

/**
 * Sets or removes a task's A2A push notification config (its `callback` field, `format: 'a2a'`),
 * for the tenant that owns the task. A task keeps one: `set` replaces a config only of the same
 * id, and never a longrun webhook (a `callback` without the format), which is not the A2A door's
 * to change. A status change reads the field in its own script, so it is notified to the config
 * that is set when it happens.
 * KEYS: task, usage (the tenant's storage budget).
 * ARGV: tenant, taskId, 'set' or 'del', configId, the config's JSON (`set` only).
 * Returns {'ok'}, {'missing'} (gone, or another tenant's), {'callback'} (a longrun webhook is
 * set), {'taken', id} (another config is set) or {'absent'} (nothing to delete).
 */
export const SET_PUSH = `
local cur = redis.call('HMGET', KEYS[1], '${F.tenant}', '${F.callback}')
if cur[1] ~= ARGV[1] then return {'missing'} end
local old = cur[2] or ''
local current = false
if old ~= '' then
  local ok, target = pcall(cjson.decode, old)
  if not ok or type(target) ~= 'table' or target.format ~= 'a2a' then
    if ARGV[3] == 'set' then return {'callback'} end
    return {'absent'}
  end
  current = tostring(target.id)
end
local new = ''
if ARGV[3] == 'set' then
  if current and current ~= ARGV[4] then return {'taken', current} end
  new = ARGV[5]
  redis.call('HSET', KEYS[1], '${F.callback}', new)
else
  if current ~= ARGV[4] then return {'absent'} end
  redis.call('HDEL', KEYS[1], '${F.callback}')
end
-- The record grew or shrank: its tenant's storage budget (decision 31) counts the difference.
if redis.call('HEXISTS', KEYS[2], ARGV[2]) == 1 and #new ~= #old then
  redis.call('HINCRBY', KEYS[2], ARGV[2], #new - #old)
  redis.call('HINCRBY', KEYS[2], '#total', #new - #old)
end
return {'ok'}
`;

/**
 * KEYS: the tenants with open tasks, a tenant's open set. ARGV: the tenant.
 * Takes the tenant out of the set if its open set is gone, in one step, so that a create adding
 * a task (and the tenant) meanwhile is never undone. Returns 1 if it was taken out.
 */
export const DROP_IDLE_TENANT = `
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
return redis.call('ZREM', KEYS[1], ARGV[1])
`;

/**
 * Moves up to ARGV[1] tenants from the plain set an older version filled (KEYS[1]) into the
 * sorted set of tenant names (KEYS[2]), in one step, so none is lost between the two.
 */
export const DRAIN_LEGACY_TENANTS = `
local names = redis.call('SPOP', KEYS[1], tonumber(ARGV[1]))
for _, name in ipairs(names) do redis.call('ZADD', KEYS[2], 0, name) end
return #names
`;
