--[[
  Takes back a task whose create or job failed or timed out, and the idempotency key only if it
  is still ours; but never a task another request may hold or that ran: one a replay of its key
  handed out (marked by the create's `mark_replayed`) or with a change recorded (`seq` past 1: a
  worker started, finished or failed it) is kept.

  Input:
    KEYS[1] task          the record
    KEYS[2] index         the tenant's index
    KEYS[3] idem          the idempotency key (the task key when none)
    KEYS[4] events        the event list of an older version (decision 57), if any
    KEYS[5] open          the tenant's open tasks
    KEYS[6] usage         the tenant's storage budget hash
    ARGV[1] member        the task's index entry
    ARGV[2] idemValue     what the idempotency key holds if it is ours ('' = no key)
    ARGV[3] id            the task id
  Output:
    {'kept'}              another request may hold the task, or it ran: left whole
    {'discarded'}         taken back
    {'absent'}            there was no record (the create never landed, or was refused)
]]
--- @include "generated/core"
--- @include "includes/usage"

local cur = redis.call('HMGET', KEY.task, F.seq, F.replayed)
if cur[1] and (cur[1] ~= '1' or cur[2]) then return {'kept'} end
usage_release_task(KEY.usage, KEY.task, ARG.id)
redis.call('DEL', KEY.task, KEY.events)
redis.call('ZREM', KEY.index, ARG.member)
redis.call('ZREM', KEY.open, ARG.id)
if ARG.idemValue ~= '' and redis.call('GET', KEY.idem) == ARG.idemValue then redis.call('DEL', KEY.idem) end
if cur[1] then return {'discarded'} end
return {'absent'}
