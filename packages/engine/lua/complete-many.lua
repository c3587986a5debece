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
    {'ok', reply, …}      per job, in order: {'ok', previousStatus, eventId} (also when this
                          completion was written before: a call Redis runs again), {'missing'}
                          or {'refused', status}
]]
--- @include "includes/write-event"
--- @include "includes/usage"

local complete = LIFECYCLE.complete
local replies = {'ok'}
-- What the completed tasks leave, by tenant, done once per tenant at the end (a worker's batch
-- is mostly one tenant's): their open-set entries (one ZREM) and their result bytes.
local done, tenants = {}, {}
local read = event_read_names({F.tenant, unpack(USAGE_READ)})
for i = 1, ITEMS do
  -- The item's key and arguments by position (item_keys/item_args would make two tables each).
  local task, id, result = KEYS[1 + i], ARGV[2 + 2 * i], ARGV[3 + 2 * i]
  local cur = redis.call('HMGET', task, unpack(read))
  local status = cur[1]
  if not status then
    replies[i + 1] = {'missing'}
  elseif not complete.from[status] then
    replies[i + 1] = completed_already(task, status, result, cur[5]) or {'refused', status}
  else
    local changes = {F.status, complete.to, F.statusMessage, complete.message, F.updatedAt,
      ARG.updatedAt, F.result, result}
    -- A task counted under a budget keeps its bytes in its record ('ub', includes/usage).
    if cur[8] then
      changes[#changes + 1] = F.usageBytes
      changes[#changes + 1] = tostring(tonumber(cur[8]) + #result)
    end
    local eid = write_event(task, cur, changes, KEY.outbox, ARG.channel, id)
    local tenant = cur[7]
    local t = done[tenant]
    if not t then
      t = {ids = {}, entries = {}, bytes = {}}
      done[tenant] = t
      tenants[#tenants + 1] = tenant
    end
    t.ids[#t.ids + 1] = id
    t.entries[#t.entries + 1] = usage_entry(id, cur[8], cur[9], cur[10])
    t.bytes[#t.bytes + 1] = #result
    replies[i + 1] = {'ok', status, eid}
  end
end
for _, tenant in ipairs(tenants) do
  local t = done[tenant]
  redis.call('ZREM', ARG.openPrefix .. tenant .. ':open', unpack(t.ids))
  usage_add_many(ARG.openPrefix .. tenant .. ':usage', t.entries, t.bytes)
end
return replies
