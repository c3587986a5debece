-- What a call did already (a table per script run): each create of a call has the same `now`,
-- so the upkeep of a key (pruning, expiries, the head's virtual time, a tenant's tag) leaves the
-- same state done once per key in a call as once per task, and costs 8 commands less per task.
-- A table per purpose (`what`), keyed by the key: no string is built per call.
local once = {}
local function first_time(what, key)
  local seen = once[what]
  if not seen then
    seen = {}
    once[what] = seen
  end
  if seen[key] then return false end
  seen[key] = true
  return true
end
