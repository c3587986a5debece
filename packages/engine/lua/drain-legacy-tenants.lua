--[[
  Moves up to `batch` tenants from the plain set an older version filled into the sorted set of
  tenant names (decision 40), in one step, so none is lost between the two.

  Input:
    KEYS[1] legacy        the plain set of tenants an older version wrote
    KEYS[2] openTenants   the sorted set of tenants with open tasks
    ARGV[1] batch         how many to move at most
  Output:
    {'ok', moved}         how many were moved
]]
local names = redis.call('SPOP', KEY.legacy, tonumber(ARG.batch))
for _, name in ipairs(names) do redis.call('ZADD', KEY.openTenants, 0, name) end
return {'ok', #names}
