--[[
  The completions of several jobs in one call (a worker's jobs that finish in the same turn): one
  round trip and one script instead of one each, and of each job only its key, id and result
  travel (status and message are core's `complete` row, the time is shared). Each is guarded on
  its own by that row, as transition-task would, and written as one event by the same writer
  (includes/write-event); a completion reads only the fields it needs.

  Input:
    KEYS[1] outbox        the webhook outbox stream
    ARGV[1] channel       the events channel prefix
    ARGV[2] openPrefix    the tenant's open set is <openPrefix><tenant>:open, its usage …:usage
    ARGV[3] updatedAt     the completions' time (ms)
  Then for each job:
    ITEM.KEYS[1] task
    ITEM.ARGV[1] id
    ITEM.ARGV[2] result   the result, as JSON
  Output:
    {'ok', reply, …}      per job, in order: {'ok', previousStatus, eventId}, {'missing'} or
                          {'refused', status}
]]
--- @include "includes/write-event"
--- @include "includes/usage"

local complete = LIFECYCLE.complete
local replies = {'ok'}
-- Each tenant's usage total is raised once, at the end (a worker's batch is mostly one tenant's).
local added = {order = {}, bytes = {}}
for i = 1, ITEMS do
  local task, a = item_keys(i).task, item_args(i)
  local cur = read_event(task, {F.tenant})
  local status = cur[1]
  if not status then
    replies[i + 1] = {'missing'}
  elseif not complete.from[status] then
    replies[i + 1] = {'refused', status}
  else
    local eid = write_event(task, cur, {F.status, complete.to, F.statusMessage, complete.message,
      F.updatedAt, ARG.updatedAt, F.result, a.result}, KEY.outbox, ARG.channel, a.id)
    redis.call('ZREM', ARG.openPrefix .. cur[7] .. ':open', a.id)
    usage_add_deferred(added, ARG.openPrefix .. cur[7] .. ':usage', a.id, #a.result)
    replies[i + 1] = {'ok', status, eid}
  end
end
usage_add_flush(added)
return replies
