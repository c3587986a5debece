--[[
  Deletes a terminal task (its record, with its history, and an event list an older version
  made), its index entry and its tags' index entries (the record names its tags) and, if asked, its idempotency key, and gives its bytes back to the
  tenant's storage budget.

  Input:
    KEYS[1] task          the record
    KEYS[2] index         the tenant's index
    KEYS[3] idem          the idempotency key (the task key when none)
    KEYS[4] events        the event list of an older version (decision 57), if any
    KEYS[5] usage         the tenant's storage budget hash
    ARGV[1] member        the task's index entry
    ARGV[2] dropIdem      '1': delete the idempotency key
    ARGV[3] id            the task id
  Output:
    {'ok', status}        deleted
    {'missing'}           no such task
    {'refused', status}   the task is not finished
]]
--- @include "generated/core"
--- @include "includes/usage"
--- @include "includes/tags"

local status = redis.call('HGET', KEY.task, F.status)
if not status then return {'missing'} end
if not TERMINAL[status] then return {'refused', status} end
usage_release_task(KEY.usage, KEY.task, ARG.id)
for _, tag in ipairs(tags_of(redis.call('HGET', KEY.task, F.tags))) do
  redis.call('ZREM', tag_index(KEY.index, tag), ARG.member)
end
redis.call('DEL', KEY.task, KEY.events)
redis.call('ZREM', KEY.index, ARG.member)
if ARG.dropIdem == '1' then redis.call('DEL', KEY.idem) end
return {'ok', status}
