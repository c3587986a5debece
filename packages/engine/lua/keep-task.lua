--[[
  Keeps a task's record until at least `keepUntil` (issue 40): a durable task that waits to the end
  of its retention, and one that ended there (`expired`), must stay readable past its ttl. The
  expiry only ever moves later; a record with no expiry is left so.

  Input:
    KEYS[1] task          the record
    ARGV[1] keepUntil     ms since the epoch the record must live to
    ARGV[2] now           ms since the epoch
  Output:
    {'ok'}                it lives to `keepUntil` at least
    {'missing'}           no such task
]]
--- @include "generated/core"

local ttl = redis.call('PTTL', KEY.task)
if ttl == -2 then return {'missing'} end
if ttl >= 0 and tonumber(ARG.now) + ttl < tonumber(ARG.keepUntil) then
  redis.call('PEXPIREAT', KEY.task, ARG.keepUntil)
end
return {'ok'}
