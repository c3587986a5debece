--[[
  A durable parent's children, recorded on the parent as they are made (issue 40, item 3): each
  chunk of a `runTasks` batch is appended to `childTaskIds` (and counted in `ctotal`) before the
  next chunk is made, so that a cancel, which reads the parent's children after its own write,
  finds every child made before it. Once the parent is not working any more (cancelled) the
  chunk is still recorded (the handle lists every child made) but refused: the maker then
  cancels it itself and makes no more. `cn:<batch>` counts the batch's
  children recorded so far, so a run made again (a crash, a retry, the same call run twice by
  Redis) appends none twice: its children come back with the same ids (idempotency keys), in
  the same order; an id the parent lists already (a child named by the handler's own key, made
  by an earlier batch) is not listed or counted twice. `cexp` keeps the earliest expiry of the
  children, for the parent's re-check.

  Input:
    KEYS[1] task          the parent's record
    ARGV[1] batch         the batch's step name (`$children:<n>`)
    ARGV[2] from          the index in the batch of the first id given
    ARGV[3] ids           the children's ids, in order (a JSON array)
    ARGV[4] expiresAt     the earliest expiry among them (ms)
  Output:
    {'ok'}                recorded (or recorded before)
    {'missing'}           no such parent
    {'refused', status}   recorded, but the parent is not working (cancelled, finished): make
                          no more, cancel these
]]
--- @include "generated/core"

local status = redis.call('HGET', KEY.task, F.status)
if not status then return {'missing'} end
local counted = 'cn:' .. ARG.batch
local recorded = tonumber(redis.call('HGET', KEY.task, counted)) or 0
local ids = cjson.decode(ARG.ids)
local from = tonumber(ARG.from)
local got = redis.call('HMGET', KEY.task, F.childTaskIds, F.childrenTotal, 'cexp')
local list = got[1] or '[]'
-- A child named by the handler's own idempotency key may be one the parent made before (another
-- batch): listed and counted once, or the parent would wait for an end counted once.
local new, taken = {}, {}
for i, id in ipairs(ids) do
  if from + i - 1 >= recorded and not taken[id] and not string.find(list, '"' .. id .. '"', 1, true) then
    new[#new + 1] = id
    taken[id] = true
  end
end
-- Refused: the ids are recorded all the same (the handle lists every child made), no more made.
local reply = {'ok'}
if not LIFECYCLE.step.from[status] then reply = {'refused', status} end
if #new == 0 then
  if recorded < from + #ids then redis.call('HSET', KEY.task, counted, from + #ids) end
  return reply
end
local add = cjson.encode(new)
if list == '[]' then list = add else list = string.sub(list, 1, -2) .. ',' .. string.sub(add, 2) end
local expires = tonumber(ARG.expiresAt)
local earliest = tonumber(got[3])
if earliest and earliest < expires then expires = earliest end
redis.call('HSET', KEY.task, F.childTaskIds, list, F.childrenTotal, (tonumber(got[2]) or 0) + #new,
  counted, math.max(recorded, from + #ids), 'cexp', expires)
return reply
