-- The create of one task, shared by create-task and create-many. `k` and `a` are its keys and
-- arguments by the names create-task's header gives (create-many fills the shared ones in).
--- @include "generated/core"
--- @include "generated/keys"
--- @include "includes/usage"
--- @include "includes/once"
--- @include "includes/fair-share"
--- @include "includes/index-upkeep"
--- @include "includes/tags"

-- A replay of an idempotency key (the same body) hands the key's task to another request: an
-- untouched one is marked, so that the create of a request that timed out does not take it back
-- (discard-task). Only the first replay of a task not yet changed writes.
local function mark_replayed(task, id, existing, idem_value)
  local sp = string.find(existing, ' ', 1, true)
  local ours = string.find(idem_value, ' ', 1, true)
  if not sp or not ours or string.sub(existing, sp) ~= string.sub(idem_value, ours) then return end
  local other = string.sub(task, 1, #task - #id) .. string.sub(existing, 1, sp - 1)
  local cur = redis.call('HMGET', other, F.seq, F.replayed)
  if cur[1] == '1' and not cur[2] then redis.call('HSET', other, F.replayed, '1') end
end

-- The fields of a new record (a flat list: name, value, …) the create reads: its tenant,
-- schedule and tags (nil when absent).
local F_TENANT, F_SCHEDULE, F_TAGS = F.tenant, F.scheduleId, F.tags
local function created_fields(fields)
  local tenant, schedule, tags
  for i = 1, #fields, 2 do
    local name = fields[i]
    if name == F_TENANT then tenant = fields[i + 1]
    elseif name == F_SCHEDULE then schedule = fields[i + 1]
    elseif name == F_TAGS then tags = fields[i + 1] end
  end
  return tenant, schedule, tags
end

-- A tenant's open tasks as this call counts them (see the cap below).
local open_counts = {}

-- Returns the reply ({'ok'}, {'ok', priority}, {'exists'}, {'dup', value}, {'gone'},
-- {'full', open} or {'over', usedBytes, retryAfterMs}) and the priority made under fair share (nil otherwise).
local function create(k, a)
  local task, id, now, expires_at = k.task, a.id, a.now, a.expiresAt
  -- A create Redis already ran: ioredis sends a command again after a reconnect when its reply
  -- was lost with the connection. The task exists and may have moved on since (run, completed):
  -- nothing is written again, and no second job is added (tests/create-resend.test.ts).
  if redis.call('EXISTS', task) == 1 then return {'exists'} end
  if a.idemValue ~= '' then
    local existing = redis.call('GET', k.idem)
    if existing then
      mark_replayed(task, id, existing, a.idemValue)
      return {'dup', existing}
    end
  end
  -- Redis refuses a script past maxmemory only at its first write, and only if that write is
  -- one that can grow memory: so nothing before the first SET or HSET below writes (a prune
  -- would let the record, and the job after it, in past maxmemory). Open tasks are counted
  -- without those that expired unfinished, which the prune further down removes.
  local fields = cjson.decode(a.fields)
  local tenant, schedule, tags = created_fields(fields)
  local task_prefix = string.sub(task, 1, #task - #id)
  -- A schedule's tick (a task naming its schedule) is made only while the schedule exists, so
  -- none is made once its delete has answered. Ticks are placed on the schedules' own prefix.
  if schedule and redis.call('EXISTS', string.sub(task_prefix, 1, #task_prefix - #TASK_INFIX) .. SCHEDULE_INFIX .. schedule) == 0 then
    return {'gone'}
  end
  local limit, budget = tonumber(a.maxOpenTasks), tonumber(a.maxBytes)
  local step, offset = tonumber(a.fairStep), tonumber(a.priorityOffset)
  if limit > 0 then
    -- Counted once a call, then kept in Lua: each create of the call adds one (below).
    local open = open_counts[k.open] or redis.call('ZCOUNT', k.open, '(' .. now, '+inf')
    open_counts[k.open] = open
    if open >= limit then return {'full', open} end
  end
  local usage
  if budget > 0 then
    -- Expired tasks give their bytes back here (see usage_state).
    usage = usage_state(k.usage, now)
    local used = usage.used
    if used + #a.fields > budget then
      local first = redis.call('ZRANGE', k.usage .. '-exp', 0, 0, 'WITHSCORES')
      local wait = first[2] and math.max(1000, tonumber(first[2]) - tonumber(now)) or 1000
      return {'over', used, wait}
    end
  end
  if a.idemValue ~= '' then redis.call('SET', k.idem, a.idemValue, 'PXAT', expires_at) end
  if usage then
    -- Its bytes, for when it leaves before it expires (includes/usage).
    fields[#fields + 1] = F.usageBytes
    fields[#fields + 1] = tostring(#a.fields)
  end
  redis.call('HSET', task, unpack(fields))
  redis.call('PEXPIREAT', task, expires_at)
  redis.call('ZADD', k.index, 0, a.member)
  if first_time('index ', k.index) then redis.call('ZREMRANGEBYLEX', k.index, a.pruneBound, '+') end
  plan_sweep(k.index, task_prefix, index_expiry(k.index, expires_at, now))
  -- Each tag's index follows the task's as the tenant's does: swept, expiring with its newest.
  for _, tag in ipairs(tags_of(tags)) do
    local tagged = tag_index(k.index, tag)
    redis.call('ZADD', tagged, 0, a.member)
    plan_sweep(tagged, task_prefix, index_expiry(tagged, expires_at, now))
  end
  -- Tasks that expired unfinished leave the tenant's open set here, cap or no cap.
  if first_time('prune ', k.open) then redis.call('ZREMRANGEBYSCORE', k.open, '-inf', now) end
  redis.call('ZADD', k.open, expires_at, id)
  if open_counts[k.open] then open_counts[k.open] = open_counts[k.open] + 1 end
  if first_time('open ', k.open) then
    redis.call('PEXPIRE', k.open, a.indexTtl)
    -- The reconciler walks the open sets of these tenants (it drops a tenant whose set is gone).
    redis.call('ZADD', k.openTenants, 0, tenant)
  end
  if usage then usage_track(k.usage, usage, #a.fields, expires_at, a.indexTtl) end
  if step > 0 then
    local priority = fair_priority(k.fair, k.head, tenant, step, offset, now, task_prefix)
    return {'ok', priority}, priority
  end
  return {'ok'}
end

-- What a call's creates leave to its end, once per key: the index sweeps, the budgets' totals
-- and expiries, the fair-share tags.
local function finish_create()
  finish_sweeps()
  finish_usage()
  finish_fair()
end
