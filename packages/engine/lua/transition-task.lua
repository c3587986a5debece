--[[
  The guarded transition of one task by a lifecycle event (core's LIFECYCLE): writes the fields
  given as one event (includes/write-event) unless the task is gone, the event's row does not
  apply to its status, or (expectSeq) a change was recorded since the caller read the record at
  that event number: an answer checked against the question asked then must not land on a
  question asked since (issue 27). A terminal status takes the task out of its tenant's open
  set; the bytes of an answer or a result count against the tenant's storage budget.

  Input:
    KEYS[1] task          the record
    KEYS[2] outbox        the webhook outbox stream
    ARGV[1] event         the lifecycle event's name (`answer`, `complete`, …)
    ARGV[2] append        an input to append to the record's inputs (JSON; '' = none)
    ARGV[3] channel       the events channel prefix (PUBLISH <channel><id>)
    ARGV[4] id            the task id
    ARGV[5] openPrefix    the tenant's open set is <openPrefix><tenant>:open, its usage …:usage
    ARGV[6] expectSeq     the event number the caller read ('' = any)
    ARGV[7] op            this call's own id ('' = none): run again, it answers as it did
                          (includes/op-note)
  Then the fields to write, a pair per item:
    ITEM.ARGV[1] field
    ITEM.ARGV[2] value
  Output:
    {'ok', previousStatus, eventId} (also: a completion, or a call naming its op, run before)
    {'missing'}                     no such task
    {'refused', status}             the event does not apply to the task's status
    {'changed', status}             a change was recorded since expectSeq
]]
--- @include "includes/write-event"
--- @include "includes/usage"
--- @include "includes/op-note"

local row = LIFECYCLE[ARG.event]
if not row then return redis.error_reply('unknown lifecycle event ' .. ARG.event) end
local appending = ARG.append ~= ''
local extra = {F.tenant, unpack(USAGE_READ)}
if appending then extra[#extra + 1] = F.inputs end
local cur = read_event(KEY.task, extra)
local status, tenant = cur[1], cur[7]
if not status then return {'missing'} end
local noted = noted_reply(KEY.task)
if noted then return noted end
if not row.from[status] then
  -- A completion run again finds its own write (includes/write-event's completed_already).
  if ARG.event == 'complete' then
    for i = 1, ITEMS do
      local item = item_args(i)
      if item.field == F.result then return completed_already(KEY.task, status, item.value, cur[5]) or {'refused', status} end
    end
  end
  return {'refused', status}
end
if ARG.expectSeq ~= '' and (cur[5] or '') ~= ARG.expectSeq then return {'changed', status} end

local changes = {}
for i = 1, ITEMS do
  local item = item_args(i)
  changes[#changes + 1] = item.field
  changes[#changes + 1] = item.value
end
local added = 0
for i = 1, #changes, 2 do
  if changes[i] == F.result then added = added + #changes[i + 1] end
end
if appending then
  local inputs = cur[11] or '[]'
  if inputs == '[]' then inputs = '[' .. ARG.append .. ']' else inputs = string.sub(inputs, 1, -2) .. ',' .. ARG.append .. ']' end
  changes[#changes + 1] = F.inputs
  changes[#changes + 1] = inputs
  added = added + #ARG.append
end
-- Same hash slot as the task key (one prefix), so this is cluster-safe.
local ub = usage_add(ARG.openPrefix .. tenant .. ':usage', ARG.id, added, cur[8], cur[9], cur[10])
if ub then
  changes[#changes + 1] = F.usageBytes
  changes[#changes + 1] = ub
end
-- The id write_event gives this event: the record's seq + 1.
note_reply(changes, {'ok', status, tostring((tonumber(cur[5]) or 0) + 1)})
local eid, now = write_event(KEY.task, cur, changes, KEY.outbox, ARG.channel, ARG.id)
if TERMINAL[now] then redis.call('ZREM', ARG.openPrefix .. tenant .. ':open', ARG.id) end
return {'ok', status, eid}
