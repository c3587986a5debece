--[[
  Removes a schedule, its index entry and its Idempotency-Key's claim, in one step (a replay
  never finds a claim whose schedule is gone). Removing one already gone changes nothing.

  Input:
    KEYS[1] schedule  the schedule's hash (`<prefix>:schedule:<id>`)
    KEYS[2] index     the tenant's schedules (`<prefix>:schedules:<tenant>`)
    ARGV[1] id        the schedule's id
  Output:
    {'ok'}
]]
--- @include "generated/schedule"
local claim = redis.call('HGET', KEY.schedule, SCHEDULE.idem)
if claim then redis.call('DEL', claim) end
redis.call('DEL', KEY.schedule)
redis.call('ZREM', KEY.index, ARG.id)
return {'ok'}
