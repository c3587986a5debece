--[[
  Takes a tenant out of the set of tenants with open tasks if its open set is gone, in one step,
  so that a create adding a task (and the tenant) meanwhile is never undone.

  Input:
    KEYS[1] openTenants   the tenants with open tasks
    KEYS[2] open          the tenant's open tasks
    ARGV[1] tenant        the tenant
  Output:
    {'ok', dropped}       1 if it was taken out, else 0
]]
if redis.call('EXISTS', KEY.open) == 1 then return {'ok', 0} end
return {'ok', redis.call('ZREM', KEY.openTenants, ARG.tenant)}
