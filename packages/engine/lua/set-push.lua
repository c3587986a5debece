--[[
  Sets or removes one of a task's A2A push notification configs (its `callback` field, a JSON
  list of configs with `format: 'a2a'`; older records keep one config object, read as a list
  of one), for the tenant that owns the task. A task keeps up to `max`: `set` replaces the
  config of the same id or adds one, and never touches a longrun webhook (a `callback` without
  the format), which is not the A2A door's to change. A status change reads the field in its
  own script, so it is notified to the configs set when it happens.

  Input:
    KEYS[1] task          the record
    KEYS[2] usage         the tenant's storage budget hash
    ARGV[1] tenant        the tenant asking
    ARGV[2] id            the task id
    ARGV[3] op            'set' or 'del'
    ARGV[4] configId      the config's id
    ARGV[5] config        the config's JSON ('set' only)
    ARGV[6] max           most configs a task keeps ('set' only)
  Output:
    {'ok'}                done
    {'missing'}           no such task, or another tenant's
    {'callback'}          a longrun webhook is set
    {'full', max}         the task has `max` configs, none of this id
    {'absent'}            nothing to delete
]]
--- @include "generated/core"

local cur = redis.call('HMGET', KEY.task, F.tenant, F.callback)
if cur[1] ~= ARG.tenant then return {'missing'} end
local old = cur[2] or ''
local list = {}
if old ~= '' then
  local ok, value = pcall(cjson.decode, old)
  if ok and type(value) == 'table' and value.format == 'a2a' then
    list = {value}
  elseif ok and type(value) == 'table' and type(value[1]) == 'table' then
    list = value
  else
    if ARG.op == 'set' then return {'callback'} end
    return {'absent'}
  end
end
local at = nil
for i, target in ipairs(list) do
  if tostring(target.id) == ARG.configId then at = i end
end
if ARG.op == 'set' then
  if at then
    list[at] = cjson.decode(ARG.config)
  elseif #list >= tonumber(ARG.max) then
    return {'full', ARG.max}
  else
    list[#list + 1] = cjson.decode(ARG.config)
  end
else
  if not at then return {'absent'} end
  table.remove(list, at)
end
local new = ''
if #list == 0 then
  redis.call('HDEL', KEY.task, F.callback)
else
  new = cjson.encode(list)
  redis.call('HSET', KEY.task, F.callback, new)
end
-- The record grew or shrank: its tenant's storage budget (decision 31) counts the difference.
if redis.call('HEXISTS', KEY.usage, ARG.id) == 1 and #new ~= #old then
  redis.call('HINCRBY', KEY.usage, ARG.id, #new - #old)
  redis.call('HINCRBY', KEY.usage, '#total', #new - #old)
end
return {'ok'}
