--[[
  Stores a new task: claims its idempotency key and checks the tenant's open-task cap, storage
  budget (decision 31) and, for a schedule's tick, that the schedule still exists, first. Under
  fair share (decision 33) it also makes the task's BullMQ priority. The record's fields travel
  as one JSON array, not thirty arguments (decision 21). Event 1 is the record itself: nothing
  else is written for the history (decision 57).

  Input:
    KEYS[1] task            the record (`<prefix>:task:<id>`)
    KEYS[2] index           the tenant's index (listing)
    KEYS[3] idem            the idempotency key (the task key when none)
    KEYS[4] open            the tenant's open tasks, by expiry
    KEYS[5] usage           the tenant's storage budget hash
    KEYS[6] openTenants     the tenants with open tasks (the reconciler walks them)
    KEYS[7] fair            fair-share tags of the queue (the task key when off)
    KEYS[8] head            the queue's BullMQ prioritized set (the task key when off)
    ARGV[1] expiresAt       when the task expires (ms)
    ARGV[2] member          the task's index entry
    ARGV[3] pruneBound      index entries past it (older than the longest ttl) are pruned
    ARGV[4] idemValue       what the idempotency key holds ('' = no key)
    ARGV[5] indexTtl        how long the tenant's index and open set outlive their newest task
    ARGV[6] id              the task id
    ARGV[7] maxOpenTasks    the tenant's open-task cap (0 = none)
    ARGV[8] maxBytes        the tenant's storage budget (0 = none)
    ARGV[9] fairStep        1 / the tenant's weight (0 = no fair share)
    ARGV[10] priorityOffset the request's own priority - 1
    ARGV[11] now            the time now (ms)
    ARGV[12] fields         the record as a JSON array [field, value, …]
  Output:
    {'ok'}                          stored
    {'ok', priority}                stored, with this BullMQ priority (fair share)
    {'exists'}                      the record exists: this create ran already, nothing written
    {'dup', idemValue}              the idempotency key names another task
    {'gone'}                        the task's schedule was deleted
    {'full', openTasks}             the tenant is at its cap
    {'over', usedBytes, retryAfterMs} the tenant's storage budget is spent
]]
--- @include "includes/create"
local reply = create(KEY, ARG)
finish_create()
return reply
