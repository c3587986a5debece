--[[
  Adds a schedule unless its tenant has `max` already: the count and the write in one step, so
  concurrent creates cannot pass the cap together. With an Idempotency-Key it is claimed in the
  same step, unless claimed already. Nothing is written before the first SET or HSET (Redis
  refuses a script past maxmemory only at its first write).

  Input:
    KEYS[1] index     the tenant's schedules (`<prefix>:schedules:<tenant>`, by creation time)
    KEYS[2] schedule  the schedule's hash (`<prefix>:schedule:<id>`)
    KEYS[3] claim     the Idempotency-Key's claim (the schedule's hash again when there is none)
    ARGV[1] max       most schedules a tenant may have (0: no cap)
    ARGV[2] id        the schedule's id
    ARGV[3] tenant    its owner
    ARGV[4] created   its creation time (ms): a field, and its score in the index
    ARGV[5] spec      its spec, as JSON
    ARGV[6] claimValue  the claim's value (`<id> <body hash>`; '' for no claim)
    ARGV[7] claimTtl  how long the claim lives (ms)
  Output:
    {'ok'}             added (or by this same call run before: ioredis resends a call whose
                       reply was lost with the connection; its index entry says so)
    {'dup', value}     the claim was taken before: its value; nothing written
    {'full', count}    the tenant has `max` schedules (`count`) already; nothing written
]]
--- @include "generated/schedule"
-- The same call run again finds its own write: the id indexed at its creation time, and its hash.
if redis.call('ZSCORE', KEY.index, ARG.id) == ARG.created and redis.call('HGET', KEY.schedule, SCHEDULE.tenant) == ARG.tenant then
  return {'ok'}
end
if ARG.claimValue ~= '' then
  local existing = redis.call('GET', KEY.claim)
  if existing then return {'dup', existing} end
end
local max = tonumber(ARG.max)
local count = redis.call('ZCARD', KEY.index)
if max > 0 and count >= max then return {'full', count} end
if ARG.claimValue ~= '' then
  redis.call('SET', KEY.claim, ARG.claimValue, 'PX', ARG.claimTtl)
  redis.call('HSET', KEY.schedule, SCHEDULE.idem, KEY.claim)
end
redis.call('HSET', KEY.schedule, SCHEDULE.tenant, ARG.tenant, SCHEDULE.createdAt, ARG.created,
  SCHEDULE.spec, ARG.spec)
redis.call('ZADD', KEY.index, ARG.created, ARG.id)
return {'ok'}
