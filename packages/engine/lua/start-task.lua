--[[
  A worker taking a task: one round trip that checks it is still to be done (core's `start`
  row), writes the fields given as one event (includes/write-event) and returns the record. A
  durable parent woken on its children (`wait` = 'children') is read only: no event.

  Input:
    KEYS[1] task          the record
    KEYS[2] outbox        the webhook outbox stream
    ARGV[1] channel       the events channel prefix
    ARGV[2] id            the task id
  Then the fields to write, a pair per item:
    ITEM.ARGV[1] field
    ITEM.ARGV[2] value
  Output:
    {'ok', {field, value, …}, {name, result, …}}
                                the record as it now is (its fields of core's FIELD, no history)
                                and its durable steps' results (issue 29), so a run replays them
                                without another round trip
    {'missing'}                 no such task
    {'refused', status}         the task is not to be started
]]
--- @include "includes/write-event"

local cur = read_event(KEY.task, {F.wait})
local status = cur[1]
if not status then return {'missing'} end
if not LIFECYCLE.start.from[status] then return {'refused', status} end
-- A durable parent woken on its children (issue 40) writes nothing here: its run says what
-- changed, if anything (a re-check every minute for hours would fill its history otherwise).
if cur[7] ~= 'children' then
  local changes = {}
  for i = 1, ITEMS do
    local item = item_args(i)
    changes[#changes + 1] = item.field
    changes[#changes + 1] = item.value
  end
  write_event(KEY.task, cur, changes, KEY.outbox, ARG.channel, ARG.id)
end
local all = {}
for _, field in pairs(F) do all[#all + 1] = field end
local values = redis.call('HMGET', KEY.task, unpack(all))
local record = {}
for i, field in ipairs(all) do
  if values[i] then
    record[#record + 1] = field
    record[#record + 1] = values[i]
  end
end
-- Every recorded step's result (issue 29), by the names its entries (issue 40) and an older
-- version's `steps` list give, read a thousand fields per HMGET (Lua's unpack has a limit).
local names = {}
local count = tonumber(redis.call('HGET', KEY.task, F.stepCount) or '0')
for from = 1, count, 1000 do
  local fields = {}
  for n = from, math.min(count, from + 999) do fields[#fields + 1] = STEP_FIELD(n) end
  for _, entry in ipairs(redis.call('HMGET', KEY.task, unpack(fields))) do
    if entry then names[#names + 1] = cjson.decode(entry).name end
  end
end
local legacy = redis.call('HGET', KEY.task, F.steps)
if legacy and legacy ~= '' and legacy ~= '[]' then
  for _, step in ipairs(cjson.decode(legacy)) do names[#names + 1] = step.name end
end
local results = {}
for from = 1, #names, 1000 do
  local fields = {}
  for i = from, math.min(#names, from + 999) do fields[#fields + 1] = 'st:' .. names[i] end
  local got = redis.call('HMGET', KEY.task, unpack(fields))
  for i = 1, #fields do
    if got[i] then
      results[#results + 1] = names[from + i - 1]
      results[#results + 1] = got[i]
    end
  end
end
return {'ok', record, results}
