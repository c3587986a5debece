--[[
  Appends a message to a task's side channel unless it holds `max` already, and wakes whoever
  waits on the task. The list expires with the record (same remaining time), so nothing
  outlives the task.

  Input:
    KEYS[1] task      the task's record
    KEYS[2] messages  its side channel (`<prefix>:messages:<id>`, a list)
    KEYS[3] op        this call's own key (`<messages>:op:<random id>`, includes/message-op)
    ARGV[1] tenant    the caller's tenant: the task must be its
    ARGV[2] message   the message (JSON)
    ARGV[3] max       most messages the channel holds (0: no bound)
    ARGV[4] channel   the task's event channel, told of the push
  Output:
    {'ok'}       queued (now, or by this same call run before)
    {'full'}     the channel holds `max` messages: nothing written
    {'absent'}   no such task, or not the tenant's
]]
--- @include "includes/task-owned"
--- @include "includes/message-op"
if op_answer() then return {'ok'} end
local max = tonumber(ARG.max)
if max > 0 and redis.call('LLEN', KEY.messages) >= max then return {'full'} end
redis.call('RPUSH', KEY.messages, ARG.message)
op_record('1')
local left = redis.call('PTTL', KEY.task)
if left > 0 then redis.call('PEXPIRE', KEY.messages, left) end
redis.call('PUBLISH', ARG.channel, '0')
return {'ok'}
