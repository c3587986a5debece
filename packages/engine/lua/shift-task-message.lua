--[[
  Takes the oldest message of a task's side channel.

  Input:
    KEYS[1] task      the task's record
    KEYS[2] messages  its side channel (`<prefix>:messages:<id>`, a list)
    ARGV[1] tenant    the caller's tenant: the task must be its
  Output:
    {'ok', message}   the oldest message, now taken
    {'empty'}         the channel holds none
    {'absent'}        no such task, or not the tenant's
]]
--- @include "includes/task-owned"
local message = redis.call('LPOP', KEY.messages)
if not message then return {'empty'} end
return {'ok', message}
