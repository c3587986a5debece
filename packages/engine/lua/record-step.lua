--[[
  A durable task's step (issue 29): stores a step's result with the task, once. The result is a
  field `st:<name>` of the record; the step is appended to the task's steps (includes/steps: one
  entry, the count and the newest 50, the same work at any count, issue 40) and written as one
  event (includes/write-event) with `message` as the statusMessage, carrying that step. A step
  already recorded (by a run that crashed after recording it, or a first run that did not read
  the record) is not written again: its stored result is returned, so every run gets the same
  value. A `ctx.step` (a name not starting with '$') past `maxSteps` is refused, and so is a step
  whose bytes would pass the tenant's storage budget: its result, entry and event count against
  it (issue 40). A sleep is recorded `waiting` until `sleepUntil`; the run that goes on past it says
  so (`ended`), and the entry becomes completed then. The same call may append child task ids
  and set what the task waits for when it parks next: `ready` says whether that is already
  there (the children all ended, the waitpoint completed), so that the caller wakes its own job
  instead of waiting for a wake-up that came before it parked.

  Input:
    KEYS[1] task          the record
    KEYS[2] outbox        the webhook outbox stream
    ARGV[1] channel       the events channel prefix
    ARGV[2] id            the task id
    ARGV[3] name          the step's name ('' = no step, only the wait or the sleep's end)
    ARGV[4] value         the step's result (JSON)
    ARGV[5] now           ms since the epoch: the step's endedAt and the event's time
    ARGV[6] message       the event's statusMessage ('' = keep; for a children wait: made here)
    ARGV[7] wait          what the task waits for: 'children', 'wp:<step>', or '' (nothing)
    ARGV[8] children      child task ids to append (a JSON array, '' = none)
    ARGV[9] sleepUntil    a sleep's end (ms): the step is recorded waiting until then ('' = not)
    ARGV[10] ended        the sleep the run went on past ('' = none): its entry is completed now
    ARGV[11] maxSteps     the most `ctx.step` calls a task records (0 = no cap)
    ARGV[12] openPrefix   the tenant's storage budget is <openPrefix><tenant>:usage
    ARGV[13] maxBytes     the tenant's storage budget (0 = none)
  Output:
    {'ok', ready}                   recorded; ready '1' when what it waits for is already there
    {'exists', value}               the step was recorded before: its stored result
    {'too-many', count}             the task recorded `maxSteps` ctx.step calls already
    {'over-budget', used, retryMs}  the step would pass the tenant's storage budget
    {'missing'}                     no such task
    {'refused', status}             the task is not working (cancelled, finished, parked for input)
]]
--- @include "includes/write-event"
--- @include "includes/steps"

local cur = read_event(KEY.task, {
  F.childTaskIds, F.childrenDone, F.childrenTotal, F.stepCalls, F.sleeping, F.tenant,
  F.stepCount, F.stepTail, F.steps, unpack(USAGE_READ)
})
local status = cur[1]
if not status then return {'missing'} end
if not LIFECYCLE.step.from[status] then return {'refused', status} end
local now = tonumber(ARG.now)
local sc, tail, legacy = cur[13], cur[14], cur[15]
local changes = {}
local step
-- `sleeping` is '<n> <name>': the entry number and name of the sleep in progress.
local open_n, open_name = string.match(cur[11] or '', '^(%d+) (.*)$')
if ARG.ended ~= '' and open_name == ARG.ended then
  step = step_replace(changes, tonumber(open_n), sc, tail, {name = ARG.ended, status = 'completed', endedAt = now})
  changes[#changes + 1] = F.sleeping
  changes[#changes + 1] = ''
end
if ARG.name ~= '' then
  local field = 'st:' .. ARG.name
  local stored = redis.call('HGET', KEY.task, field)
  if stored then return {'exists', stored} end
  local calls = tonumber(cur[10]) or 0
  local counted = string.sub(ARG.name, 1, 1) ~= '$'
  local max_steps = tonumber(ARG.maxSteps) or 0
  if counted and max_steps > 0 and calls >= max_steps then return {'too-many', tostring(calls)} end
  local entry = {name = ARG.name, status = 'completed', endedAt = now}
  if ARG.sleepUntil ~= '' then entry = {name = ARG.name, status = 'waiting', ['until'] = tonumber(ARG.sleepUntil)} end
  local bytes = step_bytes(field, ARG.value, cjson.encode(entry))
  local usage = ARG.openPrefix .. (cur[12] or '') .. ':usage'
  -- Only a task created under a budget ('ub') is held to it (includes/usage).
  if cur[16] then
    local over = step_over_budget(usage, bytes, tonumber(ARG.maxBytes) or 0, now)
    if over then return {'over-budget', over[1], over[2]} end
  end
  local n
  step, n = step_append(KEY.task, changes, sc, tail, legacy, entry)
  changes[#changes + 1] = field
  changes[#changes + 1] = ARG.value
  if counted then
    changes[#changes + 1] = F.stepCalls
    changes[#changes + 1] = tostring(calls + 1)
  end
  if ARG.sleepUntil ~= '' then
    changes[#changes + 1] = F.sleeping
    changes[#changes + 1] = n .. ' ' .. ARG.name
  end
  local ub = usage_add(usage, ARG.id, bytes, cur[16], cur[17], cur[18])
  if ub then
    changes[#changes + 1] = F.usageBytes
    changes[#changes + 1] = ub
  end
end
local total = tonumber(cur[9]) or 0
if ARG.children ~= '' and ARG.children ~= '[]' then
  local children = cur[7] or '[]'
  if children == '[]' then children = ARG.children
  else children = string.sub(children, 1, -2) .. ',' .. string.sub(ARG.children, 2) end
  total = total + #cjson.decode(ARG.children)
  changes[#changes + 1] = F.childTaskIds
  changes[#changes + 1] = children
  changes[#changes + 1] = F.childrenTotal
  changes[#changes + 1] = tostring(total)
end
local ready = '0'
local message = ARG.message
if ARG.wait == 'children' then
  local done = tonumber(cur[8]) or 0
  if done >= total then ready = '1' end
  if message == '' and ready == '0' then
    message = 'waiting for ' .. math.max(total - done, 0) .. ' of ' .. total .. ' child tasks'
  end
elseif string.sub(ARG.wait, 1, 3) == 'wp:' then
  if redis.call('HEXISTS', KEY.task, 'st:' .. string.sub(ARG.wait, 4) .. ':data') == 1 then ready = '1' end
end
changes[#changes + 1] = F.wait
changes[#changes + 1] = ARG.wait
if message ~= '' then
  changes[#changes + 1] = F.statusMessage
  changes[#changes + 1] = message
end
changes[#changes + 1] = F.updatedAt
changes[#changes + 1] = ARG.now
write_event(KEY.task, cur, changes, KEY.outbox, ARG.channel, ARG.id, step)
return {'ok', ready}
