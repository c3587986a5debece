--[[
  The completions of HTTP workers' leases sent with one lease call (decision 68): complete-many's
  work, each completion first checking that its lease still holds its job's BullMQ lock (the
  lease's token), so the lease's check and the record's write are one round trip. The job's
  finish (BullMQ's moveToFinished, which checks the lock again) follows on the same connection.

  Input:
    KEYS[1] outbox        the webhook outbox stream
    ARGV[1] channel       the events channel prefix
    ARGV[2] openPrefix    the tenant's open set is <openPrefix><tenant>:open, its usage …:usage
    ARGV[3] updatedAt     the completions' time (ms)
  Then for each job:
    ITEM.KEYS[1] task
    ITEM.KEYS[2] lock     BullMQ's lock key of the job
    ITEM.ARGV[1] id
    ITEM.ARGV[2] result   the result, as JSON
    ITEM.ARGV[3] token    the lease's lock token
  Output:
    {'ok', reply, …}      per job, in order: {'ok', previousStatus, eventId} (also when this
                          completion was written before: a call Redis runs again), {'missing'},
                          {'refused', status} or {'lost'} (the lock is not the lease's: nothing
                          written)
]]
--- @include "includes/write-event"
--- @include "includes/usage"

local complete = LIFECYCLE.complete
local replies = {'ok'}
for i = 1, ITEMS do
  local keys, a = item_keys(i), item_args(i)
  if redis.call('GET', keys.lock) ~= a.token then
    -- The job's finish follows this call on its connection: run again, the lock is gone.
    local done = redis.call('HMGET', keys.task, F.status, F.seq)
    replies[i + 1] = completed_already(keys.task, done[1], a.result, done[2]) or {'lost'}
  else
    local cur = read_event(keys.task, {F.tenant, unpack(USAGE_READ)})
    local status = cur[1]
    if not status then
      replies[i + 1] = {'missing'}
    elseif not complete.from[status] then
      replies[i + 1] = completed_already(keys.task, status, a.result, cur[5]) or {'refused', status}
    else
      local changes = {F.status, complete.to, F.statusMessage, complete.message, F.updatedAt,
        ARG.updatedAt, F.result, a.result}
      local ub = usage_add(ARG.openPrefix .. cur[7] .. ':usage', a.id, #a.result, cur[8], cur[9], cur[10])
      if ub then
        changes[#changes + 1] = F.usageBytes
        changes[#changes + 1] = ub
      end
      local eid = write_event(keys.task, cur, changes, KEY.outbox, ARG.channel, a.id)
      redis.call('ZREM', ARG.openPrefix .. cur[7] .. ':open', a.id)
      replies[i + 1] = {'ok', status, eid}
    end
  end
end
return replies
