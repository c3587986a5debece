--[[
  Takes every message of a task's side channel, oldest first.

  Input:
    KEYS[1] task      the task's record
    KEYS[2] messages  its side channel (`<prefix>:messages:<id>`, a list)
    KEYS[3] op        this call's own key (`<messages>:op:<random id>`, includes/message-op)
    ARGV[1] tenant    the caller's tenant: the task must be its
  Output:
    {'ok', message...}   every message, oldest first (none: just 'ok'), now taken (or by this
                         same call run before)
    {'absent'}           no such task, or not the tenant's
]]
--- @include "includes/task-owned"
--- @include "includes/message-op"
local taken = op_answer()
local all
if taken then
  all = cjson.decode(taken)
else
  all = redis.call('LRANGE', KEY.messages, 0, -1)
  if #all > 0 then
    redis.call('DEL', KEY.messages)
    op_record(cjson.encode(all))
  end
end
-- 'ok' put in front rather than unpack(all): unpack fails past Lua's stack limit (~8000)
table.insert(all, 1, 'ok')
return all
