-- What a call did already (a table per script run): each create of a call has the same `now`,
-- so the upkeep of a key (pruning, expiries, the head's virtual time, a tenant's tag) leaves the
-- same state done once per key in a call as once per task, and costs 8 commands less per task.
local once = {}
local function first_time(what, key)
  local k = what .. key
  if once[k] then return false end
  once[k] = true
  return true
end
