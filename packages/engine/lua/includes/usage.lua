-- A tenant's storage budget (decision 31): `usage` is a hash of task id -> bytes with the total
-- under '#total', `usage .. '-exp'` the same ids by expiry time. Only tasks created under a
-- budget are in it; adding to or releasing an untracked task does nothing.
local function usage_add(usage, id, bytes)
  if bytes > 0 and redis.call('HEXISTS', usage, id) == 1 then
    redis.call('HINCRBY', usage, id, bytes)
    redis.call('HINCRBY', usage, '#total', bytes)
  end
end

-- The same for many tasks of one tenant (`ids`, and `bytes` for each): one HMGET finds the tracked
-- ones, one HSET raises their counts and one HINCRBY the total, instead of two or three calls a task.
local function usage_add_many(usage, ids, bytes)
  local have = redis.call('HMGET', usage, unpack(ids))
  local sets, total = {}, 0
  for i = 1, #ids do
    local b = bytes[i]
    if have[i] and b > 0 then
      sets[#sets + 1] = ids[i]
      sets[#sets + 1] = tonumber(have[i]) + b
      total = total + b
    end
  end
  if total > 0 then
    redis.call('HSET', usage, unpack(sets))
    redis.call('HINCRBY', usage, '#total', total)
  end
end

-- Gives a task's bytes back. The id leaves the expiry set even without bytes in the hash: a
-- stray entry there would come back first at every submit's prune and hold its place forever.
local function usage_release(usage, id)
  local bytes = redis.call('HGET', usage, id)
  if bytes then
    redis.call('HINCRBY', usage, '#total', -tonumber(bytes))
    redis.call('HDEL', usage, id)
  end
  redis.call('ZREM', usage .. '-exp', id)
end

-- Gives back the bytes of the tenant's tasks that expired by `now` (at most `limit`, 100 unless
-- given, per call).
local function usage_release_expired(usage, now, limit)
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', usage .. '-exp', '-inf', now, 'LIMIT', 0, limit or 100)) do
    usage_release(usage, id)
  end
end

-- A create's view of a budget, once per call and key (the creates of a call share `now`): the
-- expired tasks' bytes given back first (up to 1 000 a call: a call holds at most 100 creates,
-- each of which gave back up to 100 when it ran alone), the total read once and kept in Lua, and
-- what the call adds written at its end (`finish_usage`): one HINCRBY and the keys' expiry per
-- call instead of per task (issue 28).
local usage_calls, usage_order = {}, {}
local function usage_state(usage, now)
  local st = usage_calls[usage]
  if st then return st end
  usage_release_expired(usage, now, 1000)
  st = {used = tonumber(redis.call('HGET', usage, '#total') or '0'), added = 0}
  usage_calls[usage] = st
  usage_order[#usage_order + 1] = usage
  return st
end

-- A new task's bytes, under its id and expiry; the total follows at the call's end.
local function usage_track(usage, st, id, bytes, expires_at, ttl)
  redis.call('HSET', usage, id, bytes)
  redis.call('ZADD', usage .. '-exp', expires_at, id)
  st.used, st.added, st.ttl = st.used + bytes, st.added + bytes, ttl
end

local function finish_usage()
  for _, usage in ipairs(usage_order) do
    local st = usage_calls[usage]
    if st.added > 0 then
      redis.call('HINCRBY', usage, '#total', st.added)
      redis.call('PEXPIRE', usage, st.ttl)
      redis.call('PEXPIRE', usage .. '-exp', st.ttl)
    end
  end
end
