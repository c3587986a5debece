-- A tenant's storage budget (decision 31): `usage` is a hash of entry -> bytes with the total
-- under '#total', and `usage .. '-exp'` the same entries by the time they expire. A task created
-- under a budget is counted under its expiry bucket ('@<n>': the tasks expiring in the
-- USAGE_BUCKET_MS up to n * USAGE_BUCKET_MS), its own bytes in its record ('ub'), so a create
-- writes no entry of its own (issue 28) and a bucket's bytes come back at most USAGE_BUCKET_MS
-- after its tasks expired. Tasks an older version made are counted one by one, under their id:
-- those entries are read, added to and given back as before. A task created without a budget is
-- in neither; adding to or releasing it does nothing.
--- @include "generated/core"

local USAGE_BUCKET_MS = 1000

-- The fields of a record the budget needs: its bytes ('ub', set only under a budget), its
-- creation time and ttl (its expiry bucket).
local USAGE_READ = {F.usageBytes, F.createdAt, F.ttlMs}

-- A task's expiry bucket: its entry, and the time it is given back (the tasks of a call mostly
-- share one: the last is kept).
local last_bucket = {}
local function usage_bucket(expires_at)
  local n = math.ceil(tonumber(expires_at) / USAGE_BUCKET_MS)
  if last_bucket.n ~= n then last_bucket.n, last_bucket.entry = n, '@' .. string.format('%d', n) end
  return last_bucket.entry, n * USAGE_BUCKET_MS
end

-- The entry a task's bytes are counted under: its bucket when its record has 'ub' (`ub`,
-- `created`, `ttl` as USAGE_READ reads them), else its id (an older version's entry, if any).
local function usage_entry(id, ub, created, ttl)
  if ub and created and ttl then return (usage_bucket(tonumber(created) + tonumber(ttl))) end
  return id
end

-- Counts `bytes` more for a task (its record's USAGE_READ fields given) when it is tracked: its
-- entry still holds bytes. Returns the record's new 'ub' to write, or nil (nothing to write).
local function usage_add(usage, id, bytes, ub, created, ttl)
  if bytes <= 0 then return nil end
  local entry = usage_entry(id, ub, created, ttl)
  if redis.call('HEXISTS', usage, entry) == 0 then return nil end
  redis.call('HINCRBY', usage, entry, bytes)
  redis.call('HINCRBY', usage, '#total', bytes)
  if ub then return tostring(tonumber(ub) + bytes) end
  return nil
end

-- The same for many tasks of one tenant (`entries` as usage_entry names them, and `bytes` for
-- each): one HMGET finds the tracked entries, one HSET raises them and one HINCRBY the total.
local function usage_add_many(usage, entries, bytes)
  local sums, order = {}, {}
  for i = 1, #entries do
    local e, b = entries[i], bytes[i]
    if b > 0 then
      if not sums[e] then
        sums[e] = 0
        order[#order + 1] = e
      end
      sums[e] = sums[e] + b
    end
  end
  if #order == 0 then return end
  local have = redis.call('HMGET', usage, unpack(order))
  local sets, total = {}, 0
  for i = 1, #order do
    if have[i] then
      local e = order[i]
      sets[#sets + 1] = e
      sets[#sets + 1] = tonumber(have[i]) + sums[e]
      total = total + sums[e]
    end
  end
  if total > 0 then
    redis.call('HSET', usage, unpack(sets))
    redis.call('HINCRBY', usage, '#total', total)
  end
end

-- Gives an entry's bytes back (an expired bucket, or a task an older version counted). The entry
-- leaves the expiry set even without bytes in the hash: a stray entry there would come back first
-- at every submit's prune and hold its place forever.
local function usage_release(usage, entry)
  local bytes = redis.call('HGET', usage, entry)
  if bytes then
    redis.call('HINCRBY', usage, '#total', -tonumber(bytes))
    redis.call('HDEL', usage, entry)
  end
  redis.call('ZREM', usage .. '-exp', entry)
end

-- Gives back the bytes of one task before it expires (its record `task` is about to go): its own
-- entry if an older version made one, else its 'ub' from its bucket (never more than the bucket
-- holds, so the total cannot fall below what the bucket's other tasks count).
local function usage_release_task(usage, task, id)
  if redis.call('HEXISTS', usage, id) == 1 then return usage_release(usage, id) end
  redis.call('ZREM', usage .. '-exp', id)
  local r = redis.call('HMGET', task, unpack(USAGE_READ))
  if not (r[1] and r[2] and r[3]) then return end
  local entry = usage_entry(id, r[1], r[2], r[3])
  local held = tonumber(redis.call('HGET', usage, entry) or '0')
  local bytes = math.min(tonumber(r[1]) or 0, held)
  if bytes > 0 then
    redis.call('HINCRBY', usage, entry, -bytes)
    redis.call('HINCRBY', usage, '#total', -bytes)
  end
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
  st = {used = tonumber(redis.call('HGET', usage, '#total') or '0'), added = 0, buckets = {}, bucket_order = {}}
  usage_calls[usage] = st
  usage_order[#usage_order + 1] = usage
  return st
end

-- A new task's bytes: kept in Lua under its bucket, written once per bucket at the call's end.
local function usage_track(usage, st, bytes, expires_at, ttl)
  local entry, until_ms = usage_bucket(expires_at)
  local b = st.buckets[entry]
  if not b then
    b = {entry = entry, until_ms = until_ms, bytes = 0}
    st.buckets[entry] = b
    st.bucket_order[#st.bucket_order + 1] = b
  end
  b.bytes = b.bytes + bytes
  st.used, st.added, st.ttl = st.used + bytes, st.added + bytes, ttl
end

local function finish_usage()
  for _, usage in ipairs(usage_order) do
    local st = usage_calls[usage]
    if st.added > 0 then
      for _, b in ipairs(st.bucket_order) do
        -- A bucket new to the hash joins the expiry set (by the end of its span).
        if redis.call('HINCRBY', usage, b.entry, b.bytes) == b.bytes then
          redis.call('ZADD', usage .. '-exp', b.until_ms, b.entry)
        end
      end
      redis.call('HINCRBY', usage, '#total', st.added)
      redis.call('PEXPIRE', usage, st.ttl)
      redis.call('PEXPIRE', usage .. '-exp', st.ttl)
    end
  end
end
