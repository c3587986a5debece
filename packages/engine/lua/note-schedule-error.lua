--[[
  Notes why a tick made no task, on a schedule that still exists (a tick racing a delete must
  not bring the hash back). The last run noted stays.

  Input:
    KEYS[1] schedule  the schedule's hash (`<prefix>:schedule:<id>`)
    ARGV[1] error     `{"message": ..., "at": ...}`, as JSON
  Output:
    {'ok'}     noted
    {'gone'}   no such schedule: nothing written
]]
--- @include "generated/schedule"
if redis.call('EXISTS', KEY.schedule) == 0 then return {'gone'} end
redis.call('HSET', KEY.schedule, SCHEDULE.lastError, ARG.error)
return {'ok'}
