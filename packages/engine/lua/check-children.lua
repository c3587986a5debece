--[[
  A durable parent's look at its children (issue 40, item 7): O(1), from the count its children
  keep as they end (`cdone` of `ctotal`, note-child-done.lua) and the earliest expiry noted of
  them (`cexp`, note-children.lua: past it, a child may be gone, and the parent reads them).
  Says the parent waits on them (`wait`), and writes an event only when what it shows changes
  ("waiting for 3 of 10 child tasks"): a parent re-checking an unchanged wait every minute for
  hours writes nothing, and its real steps stay in its 1 000-event history.

  Input:
    KEYS[1] task          the parent's record
    KEYS[2] outbox        the webhook outbox stream
    ARGV[1] channel       the events channel prefix
    ARGV[2] id            the task id
    ARGV[3] now           the time (ms)
    ARGV[4] expiresAt     the earliest expiry of the children still open, read just now ('' = keep)
  Output:
    {'ok', ready, expiresAt}
                          ready '1' when every child ended; expiresAt: the earliest expiry noted
                          of its children ('' when none)
    {'missing'}           no such task
    {'refused', status}   the task is not working (cancelled, finished)
]]
--- @include "includes/write-event"

local cur = read_event(KEY.task, {F.wait, F.childrenDone, F.childrenTotal, 'cexp'})
local status = cur[1]
if not status then return {'missing'} end
if not LIFECYCLE.step.from[status] then return {'refused', status} end
local done, total = tonumber(cur[8]) or 0, tonumber(cur[9]) or 0
local expires = cur[10] or ''
if ARG.expiresAt ~= '' and ARG.expiresAt ~= expires then
  expires = ARG.expiresAt
  redis.call('HSET', KEY.task, 'cexp', expires)
end
if done >= total then return {'ok', '1', expires} end
local message = 'waiting for ' .. (total - done) .. ' of ' .. total .. ' child tasks'
if cur[7] ~= 'children' or cur[2] ~= message then
  write_event(KEY.task, cur, {F.wait, 'children', F.statusMessage, message, F.updatedAt, ARG.now},
    KEY.outbox, ARG.channel, ARG.id)
end
return {'ok', '0', expires}
