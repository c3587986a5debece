--[[
  A durable task's waitpoint timed out (issue 40): the run woken at the waitpoint's `expiresAt`
  without its data records the timeout as the waitpoint's outcome, once, like a step: the field
  `st:<name>:timeout` and a step entry (includes/steps), as one event carrying it
  (includes/write-event). A waitpoint has
  exactly one outcome: complete-waitpoint.lua refuses one whose timeout is recorded, and this
  refuses one whose data came first (the run then gets that data). Run twice, it answers `ok`
  again: the timeout it wrote is the outcome.

  Input:
    KEYS[1] task          the record
    KEYS[2] outbox        the webhook outbox stream
    ARGV[1] channel       the events channel prefix
    ARGV[2] id            the task id
    ARGV[3] name          the waitpoint's step name (`$waitpoint:<n>`)
    ARGV[4] now           ms since the epoch
    ARGV[5] message       the event's statusMessage
  Output:
    {'ok'}                the timeout is the outcome (recorded now or before)
    {'completed', data}   the data came first: it is the outcome
    {'missing'}           no such task
    {'refused', status}   the task is not working (cancelled, finished)
]]
--- @include "includes/write-event"
--- @include "includes/steps"

local data = redis.call('HGET', KEY.task, 'st:' .. ARG.name .. ':data')
if data then return {'completed', data} end
local field = 'st:' .. ARG.name .. ':timeout'
if redis.call('HEXISTS', KEY.task, field) == 1 then return {'ok'} end
local cur = read_event(KEY.task, STEP_READ)
local status = cur[1]
if not status then return {'missing'} end
if not LIFECYCLE.step.from[status] then return {'refused', status} end
local entry = {name = ARG.name .. ':timeout', status = 'completed', endedAt = tonumber(ARG.now)}
local changes = {field, ARG.now, F.statusMessage, ARG.message, F.updatedAt, ARG.now}
local step = step_append(KEY.task, changes, cur[7], cur[8], cur[9], entry)
write_event(KEY.task, cur, changes, KEY.outbox, ARG.channel, ARG.id, step)
return {'ok'}
