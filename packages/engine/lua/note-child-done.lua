--[[
  A child task ended (issue 29): counts it, once, in its parent's record (`cd:<child>` marks it
  counted; `cdone` counts), and says whether the parent, parked on its children, is to be woken
  now that all of them ended. The child's own terminal write is on its shard; this is the
  parent's (the engine calls it after the child's transition, so shards may differ).

  Input:
    KEYS[1] task          the parent's record
    ARGV[1] child         the child task's id
  Output:
    {'wake'}              every child ended and the parent waits on them: promote its job
    {'wait'}              counted (or counted before); nothing to wake
    {'missing'}           no such parent
]]
--- @include "generated/core"

local status = redis.call('HGET', KEY.task, F.status)
if not status then return {'missing'} end
if redis.call('HSETNX', KEY.task, 'cd:' .. ARG.child, '1') == 1 then
  redis.call('HINCRBY', KEY.task, F.childrenDone, 1)
end
local got = redis.call('HMGET', KEY.task, F.wait, F.childrenDone, F.childrenTotal)
if TERMINAL[status] or got[1] ~= 'children' then return {'wait'} end
if (tonumber(got[2]) or 0) >= (tonumber(got[3]) or 0) then return {'wake'} end
return {'wait'}
