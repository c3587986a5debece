-- The one place an event is written (decision 57). A task's history lives in its record: the
-- record's own state is its newest event (id `seq`), and each earlier one is a field
-- EVENT_FIELD(n) holding {s = n, st = status, m = message, u = updatedAt, p = progress}, as
-- JSON. A change therefore writes one field more, the state it replaces, in the same HSET as the
-- change itself: no second key, no expiry to keep in step, nothing for the create to write.
-- The newest 1 000 events are kept (999 fields and the record).
--- @include "generated/core"

local HISTORY = 1000

-- What a change reads before it writes, in this order (read_event's callers add their own).
local EVENT_READ = {F.status, F.statusMessage, F.progress, F.updatedAt, F.seq, F.callback}

-- The fields read_event reads: the six above, then `extra`'s (at 7, 8, …). A script reading
-- many records (complete-many) makes the list once and reads each with HMGET of it.
local function event_read_names(extra)
  local names = {unpack(EVENT_READ)}
  for i = 1, #extra do names[#names + 1] = extra[i] end
  return names
end

-- One HMGET of the record: the six fields above, then `extra`'s (at 7, 8, …).
local function read_event(task, extra)
  return redis.call('HMGET', task, unpack(event_read_names(extra)))
end

local function event_entry(seq, st, msg, progress, updated)
  local entry = {s = seq, st = st, m = msg or '', u = tonumber(updated) or 0}
  if progress and progress ~= '' then entry.p = progress end
  return cjson.encode(entry)
end

-- A completed task's numeric progress (a percent) reads 100: done is done, whatever the handler
-- last reported (issue 27). An object is the handler's own shape, which longrun cannot finish,
-- and no progress stays none. Returns the progress to write, or nil to leave it.
local function done_progress(st, progress)
  if st == LIFECYCLE.complete.to and progress and progress ~= '100' and tonumber(progress) then return '100' end
  return nil
end

-- Applies `changes` ({field, value, …}) to the task whose state `cur` read_event read, as one
-- event: the state it replaces becomes field EVENT_FIELD(seq), the record is event seq + 1. The
-- change is announced (PUBLISH of its id), and put in the webhook outbox when the task has a
-- callback and its status changed or a durable step was recorded or changed (`step`, its entry's
-- JSON: a step, sleep, child task or waitpoint, issue 29). That step is kept with the event
-- (EVENT_STEP_FIELD, trimmed with it), so an event carries the one step it changed, not the
-- task's list (issue 40). Returns the new event's id, and the status now.
local function write_event(task, cur, changes, outbox, channel, id, step)
  local status, msg, progress, updated, callback = cur[1], cur[2], cur[3], cur[4], cur[6]
  local seq = tonumber(cur[5]) or 0
  local now, new_progress, stepped = status, progress, step ~= nil
  for i = 1, #changes, 2 do
    if changes[i] == F.status then now = changes[i + 1]
    elseif changes[i] == F.progress then new_progress = changes[i + 1]
    -- An older layout's whole list written (no script here writes it now): a step all the same.
    elseif changes[i] == F.steps then stepped = true end
  end
  local done = done_progress(now, new_progress)
  if done then
    changes[#changes + 1] = F.progress
    changes[#changes + 1] = done
  end
  -- A record an older version made without `seq` has no event to keep: it starts at 1.
  if seq > 0 then
    changes[#changes + 1] = EVENT_FIELD(seq)
    changes[#changes + 1] = event_entry(seq, status, msg, progress, updated)
  end
  seq = seq + 1
  changes[#changes + 1] = F.seq
  changes[#changes + 1] = tostring(seq)
  if step then
    changes[#changes + 1] = EVENT_STEP_FIELD(seq)
    changes[#changes + 1] = step
  end
  redis.call('HSET', task, unpack(changes))
  if seq > HISTORY then redis.call('HDEL', task, EVENT_FIELD(seq - HISTORY), EVENT_STEP_FIELD(seq - HISTORY)) end
  local eid = tostring(seq)
  if (now ~= status or stepped) and callback and callback ~= '' then
    redis.call('XADD', outbox, '*', 'task', id, 'event', eid)
  end
  redis.call('PUBLISH', channel .. id, eid)
  return eid, now
end

-- A completion Redis runs again (ioredis resends a call whose reply was lost with the
-- connection) finds its own write: the task completed with this very result. It is answered as
-- the first run was (`{'ok', status, eventId}`) rather than refused, so the worker counts its run
-- completed and tells a durable parent. Read only on a refusal: nothing on the usual path.
local function completed_already(task, status, result, seq)
  if status ~= LIFECYCLE.complete.to or redis.call('HGET', task, F.result) ~= result then return nil end
  return {'ok', status, seq or ''}
end
