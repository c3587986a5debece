-- A durable task's steps (issue 40). Entry n (1, 2, …) is the record field STEP_FIELD(n), the
-- JSON {name, status = 'completed', endedAt} (or a sleep in progress's {name, status =
-- 'waiting', until}); `sc` counts them and `stail` holds the newest STEP_TAIL as one JSON array,
-- what a handle shows without a second read. Recording a step writes its entry, the count and
-- the tail: the same work at step 1 000 as at step 10 (the whole list rewritten at each step
-- made 10 000 steps cost 28 s). A record an older version wrote keeps its whole list in `steps`:
-- its first step here moves that list into entries, once, so readers see one layout after it.
--- @include "generated/core"
--- @include "includes/usage"

local STEP_TAIL = 50

-- The fields the functions below need, read with the record (read_event's `extra`).
local STEP_READ = {F.stepCount, F.stepTail, F.steps}

-- Appends `entry` (a table) as the task's next step; `sc`, `tail`, `legacy` as STEP_READ read
-- them. Adds its writes to `changes`; returns the entry's JSON (for its event) and its number.
local function step_append(task, changes, sc, tail, legacy, entry)
  local n, list = tonumber(sc), nil
  if n and tail then
    list = cjson.decode(tail)
  else
    n, list = 0, {}
    if legacy and legacy ~= '' and legacy ~= '[]' then
      local old = cjson.decode(legacy)
      for i, e in ipairs(old) do
        changes[#changes + 1] = STEP_FIELD(i)
        changes[#changes + 1] = cjson.encode(e)
      end
      n = #old
      for i = math.max(1, n - STEP_TAIL + 1), n do list[#list + 1] = old[i] end
      redis.call('HDEL', task, F.steps)
    end
  end
  n = n + 1
  local json = cjson.encode(entry)
  list[#list + 1] = entry
  if #list > STEP_TAIL then table.remove(list, 1) end
  changes[#changes + 1] = STEP_FIELD(n)
  changes[#changes + 1] = json
  changes[#changes + 1] = F.stepCount
  changes[#changes + 1] = tostring(n)
  changes[#changes + 1] = F.stepTail
  changes[#changes + 1] = cjson.encode(list)
  return json, n
end

-- Replaces entry `n` (of `sc`) with `entry` (a sleep that ended), in the tail too when it is
-- there. Adds its writes to `changes`; returns the entry's JSON.
local function step_replace(changes, n, sc, tail, entry)
  local json = cjson.encode(entry)
  changes[#changes + 1] = STEP_FIELD(n)
  changes[#changes + 1] = json
  local count = tonumber(sc) or 0
  if tail and n > count - STEP_TAIL then
    local list = cjson.decode(tail)
    local at = #list - (count - n)
    if list[at] and list[at].name == entry.name then
      list[at] = entry
      changes[#changes + 1] = F.stepTail
      changes[#changes + 1] = cjson.encode(list)
    end
  end
  return json
end

-- Whether `bytes` more would pass the tenant's storage budget `max` (0: none): nil when they fit,
-- else {used, retryAfterMs} as a submit's refusal says it (includes/create). Expired tasks'
-- bytes are given back first when they would not fit.
local function step_over_budget(usage, bytes, max, now)
  if max <= 0 then return nil end
  local used = tonumber(redis.call('HGET', usage, '#total') or '0')
  if used + bytes <= max then return nil end
  usage_release_expired(usage, now)
  used = tonumber(redis.call('HGET', usage, '#total') or '0')
  if used + bytes <= max then return nil end
  local first = redis.call('ZRANGE', usage .. '-exp', 0, 0, 'WITHSCORES')
  local wait = first[2] and math.max(1000, tonumber(first[2]) - now) or 1000
  return {tostring(used), tostring(wait)}
end

-- What a stored step takes: its result, its field's name, its entry and its event's copy.
local function step_bytes(name, value, entry_json)
  return #value + #name + 3 + 2 * #entry_json
end
