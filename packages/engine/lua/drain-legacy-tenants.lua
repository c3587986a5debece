--[[
  Moves up to `batch` tenants from the plain set an older version filled into the sorted set of
  tenant names, in one step, so none is lost between the two.

  Input:
    KEYS[1] legacy   the plain set of tenant names an older version kept
    KEYS[2] tenants  the tenants with open tasks (a sorted set of names, score 0)
    ARGV[1] batch    most names moved
  Output:
    {'ok', moved}    how many names moved (0: the plain set is empty or gone)
]]
local names = redis.call('SPOP', KEY.legacy, tonumber(ARG.batch))
for _, name in ipairs(names) do redis.call('ZADD', KEY.tenants, 0, name) end
return {'ok', #names}
