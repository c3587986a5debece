--[[
  Takes the oldest message of a task's side channel.

  Input:
    KEYS[1] task      the task's record
    KEYS[2] messages  its side channel (`<prefix>:messages:<id>`, a list)
    KEYS[3] op        this call's own key (`<messages>:op:<random id>`, includes/message-op)
    ARGV[1] tenant    the caller's tenant: the task must be its
  Output:
    {'ok', message}   the oldest message, now taken (or by this same call run before)
    {'empty'}         the channel holds none
    {'absent'}        no such task, or not the tenant's
]]
--- @include "includes/task-owned"
--- @include "includes/message-op"
local taken = op_answer()
if taken then return {'ok', taken} end
local message = redis.call('LPOP', KEY.messages)
if not message then return {'empty'} end
op_record(message)
return {'ok', message}
