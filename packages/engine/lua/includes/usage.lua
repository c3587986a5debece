-- A tenant's storage budget (decision 31): `usage` is a hash of task id -> bytes with the total
-- under '#total', `usage .. '-exp'` the same ids by expiry time. Only tasks created under a
-- budget are in it; adding to or releasing an untracked task does nothing.
local function usage_add(usage, id, bytes)
  if bytes > 0 and redis.call('HEXISTS', usage, id) == 1 then
    redis.call('HINCRBY', usage, id, bytes)
    redis.call('HINCRBY', usage, '#total', bytes)
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

-- Gives back the bytes of the tenant's tasks that expired by `now` (at most 100 per call).
local function usage_release_expired(usage, now)
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', usage .. '-exp', '-inf', now, 'LIMIT', 0, 100)) do
    usage_release(usage, id)
  end
end
