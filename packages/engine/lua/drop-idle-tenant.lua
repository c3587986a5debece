--[[
  Takes a tenant out of the set of tenants with open tasks if its open set is gone, in one step,
  so that a create adding a task (and the tenant) meanwhile is never undone.

  Input:
    KEYS[1] tenants  the tenants with open tasks (a sorted set of names)
    KEYS[2] open     the tenant's open set
    ARGV[1] tenant   the tenant
  Output:
    {'ok', removed}  taken out (removed 1), or was not there (0)
    {'open'}         its open set exists: left in
]]
if redis.call('EXISTS', KEY.open) == 1 then return {'open'} end
return {'ok', redis.call('ZREM', KEY.tenants, ARG.tenant)}
