--[[
  Takes every message of a task's side channel, oldest first.

  Input:
    KEYS[1] task      the task's record
    KEYS[2] messages  its side channel (`<prefix>:messages:<id>`, a list)
    ARGV[1] tenant    the caller's tenant: the task must be its
  Output:
    {'ok', message...}   every message, oldest first (none: just 'ok'), now taken
    {'absent'}           no such task, or not the tenant's
]]
--- @include "includes/task-owned"
local all = redis.call('LRANGE', KEY.messages, 0, -1)
redis.call('DEL', KEY.messages)
-- 'ok' put in front rather than unpack(all): unpack fails past Lua's stack limit (~8000)
table.insert(all, 1, 'ok')
return all
