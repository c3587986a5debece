--[[
  A tenant's open tasks (not yet expired) and stored bytes on this shard, after giving back the
  bytes of its tasks that expired (at most 100, as a create on this shard would, by the same
  code: includes/usage).

  Input:
    KEYS[1] open          the tenant's open tasks, by expiry
    KEYS[2] usage         the tenant's storage budget hash
    ARGV[1] now           the time now (ms)
  Output:
    {'ok', openTasks, bytes}
]]
--- @include "includes/usage"

local now = tonumber(ARG.now)
usage_release_expired(KEY.usage, now)
local open = redis.call('ZCOUNT', KEY.open, '(' .. now, '+inf')
return {'ok', open, tonumber(redis.call('HGET', KEY.usage, '#total') or '0')}
