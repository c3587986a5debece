--[[
  Notes that a tick made (or found, when redelivered) a task, on a schedule that still exists
  (a tick racing a delete must not bring the hash back); the last tick's error is cleared.

  Input:
    KEYS[1] schedule  the schedule's hash (`<prefix>:schedule:<id>`)
    ARGV[1] at        when the tick ran (ms)
    ARGV[2] task      the id of the task it made
  Output:
    {'ok'}     noted
    {'gone'}   no such schedule: nothing written
]]
--- @include "generated/schedule"
if redis.call('EXISTS', KEY.schedule) == 0 then return {'gone'} end
redis.call('HDEL', KEY.schedule, SCHEDULE.lastError)
redis.call('HSET', KEY.schedule, SCHEDULE.lastRunAt, ARG.at, SCHEDULE.lastTaskId, ARG.task)
return {'ok'}
