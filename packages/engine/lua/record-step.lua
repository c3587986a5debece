--[[
  A durable task's step (issue 29): stores a step's result with the task, once. The result is a
  field `st:<name>` of the record; the step is added to the `steps` summary and written as one
  event (includes/write-event) with `message` as the statusMessage. A step already recorded (by
  a run that crashed after recording it, or a first run that did not read the record) is not
  written again: its stored result is returned, so every run gets the same value. The same call
  may append child task ids and set what the task waits for when it parks next: `ready` says
  whether that is already there (the children all ended, the waitpoint completed), so that the
  caller wakes its own job instead of waiting for a wake-up that came before it parked.

  Input:
    KEYS[1] task          the record
    KEYS[2] outbox        the webhook outbox stream
    ARGV[1] channel       the events channel prefix
    ARGV[2] id            the task id
    ARGV[3] name          the step's name ('' = no step, only the wait)
    ARGV[4] value         the step's result (JSON)
    ARGV[5] endedAt       the summary's endedAt (ms)
    ARGV[6] message       the event's statusMessage ('' = keep; for a children wait: made here)
    ARGV[7] wait          what the task waits for: 'children', 'wp:<step>', or '' (nothing)
    ARGV[8] children      child task ids to append (a JSON array, '' = none)
  Output:
    {'ok', ready}         recorded; ready '1' when what it waits for is already there
    {'exists', value}     the step was recorded before: its stored result
    {'missing'}           no such task
    {'refused', status}   the task is not working (cancelled, finished, parked for input)
]]
--- @include "includes/write-event"

local cur = read_event(KEY.task, {F.steps, F.childTaskIds, F.childrenDone, F.childrenTotal})
local status = cur[1]
if not status then return {'missing'} end
if not LIFECYCLE.step.from[status] then return {'refused', status} end
local changes = {}
if ARG.name ~= '' then
  local field = 'st:' .. ARG.name
  local stored = redis.call('HGET', KEY.task, field)
  if stored then return {'exists', stored} end
  local entry = cjson.encode({name = ARG.name, status = 'completed', endedAt = tonumber(ARG.endedAt)})
  local steps = cur[7] or '[]'
  if steps == '[]' then steps = '[' .. entry .. ']' else steps = string.sub(steps, 1, -2) .. ',' .. entry .. ']' end
  changes = {field, ARG.value, F.steps, steps}
end
local total = tonumber(cur[10]) or 0
if ARG.children ~= '' and ARG.children ~= '[]' then
  local children = cur[8] or '[]'
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
  local done = tonumber(cur[9]) or 0
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
changes[#changes + 1] = ARG.endedAt
write_event(KEY.task, cur, changes, KEY.outbox, ARG.channel, ARG.id)
return {'ok', ready}
