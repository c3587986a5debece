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
-- The tail is kept as text: appended to, and its oldest entry cut off at its end, never decoded
-- (a 50-entry decode and encode made a step cost half as much again at step 1 000 as at 10).
-- `},{"` is only ever an entry boundary: inside a JSON string a quote is always escaped.
local function step_append(task, changes, sc, tail, legacy, entry)
  local n = tonumber(sc)
  local json = cjson.encode(entry)
  if n and tail then
    tail = string.sub(tail, 1, -2) .. ',' .. json .. ']'
    if n + 1 > STEP_TAIL then
      local cut = string.find(tail, '},{"', 1, true)
      tail = '[' .. string.sub(tail, cut + 2)
    end
  else
    n = 0
    local list = {}
    if legacy and legacy ~= '' and legacy ~= '[]' then
      local old = cjson.decode(legacy)
      for i, e in ipairs(old) do
        changes[#changes + 1] = STEP_FIELD(i)
        changes[#changes + 1] = cjson.encode(e)
      end
      n = #old
      for i = math.max(1, n - STEP_TAIL + 2), n do list[#list + 1] = cjson.encode(old[i]) end
      redis.call('HDEL', task, F.steps)
    end
    list[#list + 1] = json
    tail = '[' .. table.concat(list, ',') .. ']'
  end
  n = n + 1
  changes[#changes + 1] = STEP_FIELD(n)
  changes[#changes + 1] = json
  changes[#changes + 1] = F.stepCount
  changes[#changes + 1] = tostring(n)
  changes[#changes + 1] = F.stepTail
  changes[#changes + 1] = tail
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
