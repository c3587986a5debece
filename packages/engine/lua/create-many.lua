--[[
  The creates of several tasks in one call (the submits an API process handled in one turn,
  decision 21), each on its own and in order, as create-task: a later one sees the idempotency
  keys and open tasks of the earlier ones. A task created here may have its BullMQ job added in
  the same step, by BullMQ's own add script (decision 39), after its record; under fair share
  the job's priority is set in its options first.

  Input:
    KEYS[1] openTenants     the tenants with open tasks
    ARGV[1] now             the time now (ms)
    ARGV[2] pruneBound      see create-task
    ARGV[3] indexTtl        see create-task
  Then for each task (see create-task for the meaning of each):
    ITEM.KEYS[1] task
    ITEM.KEYS[2] index
    ITEM.KEYS[3] idem
    ITEM.KEYS[4] open
    ITEM.KEYS[5] usage
    ITEM.KEYS[6] fair
    ITEM.KEYS[7] head
    ITEM.ARGV[1] expiresAt
    ITEM.ARGV[2] member
    ITEM.ARGV[3] idemValue
    ITEM.ARGV[4] id
    ITEM.ARGV[5] maxOpenTasks
    ITEM.ARGV[6] maxBytes
    ITEM.ARGV[7] fairStep
    ITEM.ARGV[8] priorityOffset
    ITEM.ARGV[9] fields
    ITEM.ARGV[10] jobTag     the job's BullMQ add script ('' = no job: the caller adds it)
    ITEM.ARGV[11] jobGroup   which key group (below) the job's add runs on, from 1
    ITEM.ARGV[12] jobArgs    BullMQ's packed arguments ('' when no job)
    ITEM.ARGV[13] jobData    the job's data
    ITEM.ARGV[14] jobOpts    BullMQ's packed options
  After the items, the jobs' key groups (rest_key): ADD_KEYS keys each, the queue keys of one
  add script, shared by the jobs of one queue.
  Output:
    {'ok', reply, …}        one create-task reply per task, in order
]]
--- @include "includes/create"
--- @include "bullmq/add"
--- @include "bullmq/set-fair-priority"
--- @include "bullmq/quick-add"

local groups = {}
local function add_job(a, priority)
  local g = tonumber(a.jobGroup)
  local keys = groups[g]
  if not keys then
    keys = {}
    for j = 1, ADD_KEYS do keys[j] = rest_key((g - 1) * ADD_KEYS + j) end
    groups[g] = keys
  end
  -- The record was made in this call (create answers 'exists' otherwise): the job id is new.
  if bullmq_quick_add(a.jobTag, keys, {a.jobArgs, a.jobData, a.jobOpts}, priority, true) then return end
  local opts = a.jobOpts
  if priority then opts = set_fair_priority(opts, priority) end
  bullmq_add(a.jobTag, keys, {a.jobArgs, a.jobData, opts})
end

local replies = {'ok'}
-- One table of keys and one of arguments, filled in for each item in turn (create keeps neither).
local k, a = {}, {}
for i = 1, ITEMS do
  item_keys(i, k)
  item_args(i, a)
  k.openTenants = KEY.openTenants
  a.now, a.pruneBound, a.indexTtl = ARG.now, ARG.pruneBound, ARG.indexTtl
  local reply, priority = create(k, a)
  if a.jobTag ~= '' and reply[1] == 'ok' then add_job(a, priority) end
  replies[i + 1] = reply
end
finish_create()
return replies
