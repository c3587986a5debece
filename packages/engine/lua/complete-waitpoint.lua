--[[
  Completes a durable task's waitpoint (`POST /v1/waitpoints/{id}`, issue 29): stores the posted
  data as the step `<name>:data` of the task (the handler's `ctx.waitFor` returns it), once, as
  one event (includes/write-event) carrying that step (includes/steps). Its bytes count against
  the tenant's storage budget, and data that would pass it is refused (issue 40). `wake` says the
  task's job is parked on this waitpoint: the caller promotes it (if the handler parks after
  this, its own park sees the data and wakes).
  A waitpoint has one outcome (issue 40): once its `expiresAt` has passed (by `now`), or its run
  recorded the timeout (time-out-waitpoint.lua, by the worker's clock), it is `timedOut`,
  whether or not the handler has run since.

  Input:
    KEYS[1] task          the record
    KEYS[2] outbox        the webhook outbox stream
    ARGV[1] tenant        the caller's tenant: the task must be its
    ARGV[2] channel       the events channel prefix
    ARGV[3] id            the task id
    ARGV[4] name          the waitpoint's step name (`$waitpoint:<n>`)
    ARGV[5] data          the posted data (JSON)
    ARGV[6] now           ms since the epoch
    ARGV[7] message       the event's statusMessage
    ARGV[8] op            this call's own id ('' = none): run again, it answers as it did
                          (includes/op-note)
    ARGV[9] openPrefix    the tenant's storage budget is <openPrefix><tenant>:usage
    ARGV[10] maxBytes     the tenant's storage budget (0 = none)
  Output:
    {'ok', wake}                    completed; wake '1' when the job waits on it
    {'absent'}                      no such task or waitpoint, or not the tenant's
    {'completed'}                   completed before
    {'refused', status}             the task is finished
    {'over-budget', used, retryMs}  the data would pass the tenant's storage budget
    {'timedOut'}                    the waitpoint timed out: its timeout is the outcome
]]
--- @include "includes/task-owned"
--- @include "includes/write-event"
--- @include "includes/op-note"
--- @include "includes/steps"

local noted = noted_reply(KEY.task)
if noted then return noted end
if redis.call('HEXISTS', KEY.task, 'st:' .. ARG.name) == 0 then return {'absent'} end
local field = 'st:' .. ARG.name .. ':data'
if redis.call('HEXISTS', KEY.task, field) == 1 then return {'completed'} end
local cur = read_event(KEY.task, {F.wait, F.stepCount, F.stepTail, F.steps, unpack(USAGE_READ)})
local status = cur[1]
if not LIFECYCLE.waitpoint.from[status] then return {'refused', status} end
if redis.call('HEXISTS', KEY.task, 'st:' .. ARG.name .. ':timeout') == 1 then return {'timedOut'} end
local decoded, made = pcall(cjson.decode, redis.call('HGET', KEY.task, 'st:' .. ARG.name))
if decoded and type(made) == 'table' and tonumber(made.expiresAt) and tonumber(ARG.now) >= tonumber(made.expiresAt) then
  return {'timedOut'}
end
local now = tonumber(ARG.now)
local entry = {name = ARG.name .. ':data', status = 'completed', endedAt = now}
local bytes = step_bytes(field, ARG.data, cjson.encode(entry))
local usage = ARG.openPrefix .. ARG.tenant .. ':usage'
-- Only a task created under a budget ('ub') is held to it (includes/usage).
if cur[11] then
  local over = step_over_budget(usage, bytes, tonumber(ARG.maxBytes) or 0, now)
  if over then return {'over-budget', over[1], over[2]} end
end
local changes = {field, ARG.data, F.statusMessage, ARG.message, F.updatedAt, ARG.now}
local step = step_append(KEY.task, changes, cur[8], cur[9], cur[10], entry)
local ub = usage_add(usage, ARG.id, bytes, cur[11], cur[12], cur[13])
if ub then
  changes[#changes + 1] = F.usageBytes
  changes[#changes + 1] = ub
end
local reply = {'ok', cur[7] == 'wp:' .. ARG.name and '1' or '0'}
note_reply(changes, reply)
write_event(KEY.task, cur, changes, KEY.outbox, ARG.channel, ARG.id, step)
return reply
