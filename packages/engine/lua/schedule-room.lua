--[[
  Whether a tenant has room for another schedule, read before a create does any work (the
  add-schedule script checks again when it writes). Read only.

  Input:
    KEYS[1] index   the tenant's schedules (`<prefix>:schedules:<tenant>`, a sorted set)
    KEYS[2] claim   the Idempotency-Key's claim (the index again when there is none)
    ARGV[1] max     most schedules a tenant may have (0: no cap)
    ARGV[2] checkClaim  '1' to look at the claim, '0' when there is none
  Output:
    {'ok'}             room for one more
    {'dup', value}     the claim was taken before: its value (`<id> <body hash>`)
    {'full', count}    the tenant has `max` schedules (`count`) already
]]
if ARG.checkClaim == '1' then
  local existing = redis.call('GET', KEY.claim)
  if existing then return {'dup', existing} end
end
local max = tonumber(ARG.max)
local count = redis.call('ZCARD', KEY.index)
if max > 0 and count >= max then return {'full', count} end
return {'ok'}
