--[[
  Sets or removes a task's A2A push notification config (its `callback` field, `format: 'a2a'`),
  for the tenant that owns the task. A task keeps one: `set` replaces a config only of the same
  id, and never a longrun webhook (a `callback` without the format), which is not the A2A door's
  to change. A status change reads the field in its own script, so it is notified to the config
  that is set when it happens.

  Input:
    KEYS[1] task          the record
    KEYS[2] usage         the tenant's storage budget hash
    ARGV[1] tenant        the tenant asking
    ARGV[2] id            the task id
    ARGV[3] op            'set' or 'del'
    ARGV[4] configId      the config's id
    ARGV[5] config        the config's JSON ('set' only)
  Output:
    {'ok'}                done
    {'missing'}           no such task, or another tenant's
    {'callback'}          a longrun webhook is set
    {'taken', id}         another config is set
    {'absent'}            nothing to delete
]]
--- @include "generated/core"

local cur = redis.call('HMGET', KEY.task, F.tenant, F.callback)
if cur[1] ~= ARG.tenant then return {'missing'} end
local old = cur[2] or ''
local current = false
if old ~= '' then
  local ok, target = pcall(cjson.decode, old)
  if not ok or type(target) ~= 'table' or target.format ~= 'a2a' then
    if ARG.op == 'set' then return {'callback'} end
    return {'absent'}
  end
  current = tostring(target.id)
end
local new = ''
if ARG.op == 'set' then
  if current and current ~= ARG.configId then return {'taken', current} end
  new = ARG.config
  redis.call('HSET', KEY.task, F.callback, new)
else
  if current ~= ARG.configId then return {'absent'} end
  redis.call('HDEL', KEY.task, F.callback)
end
-- The record grew or shrank: its tenant's storage budget (decision 31) counts the difference.
if redis.call('HEXISTS', KEY.usage, ARG.id) == 1 and #new ~= #old then
  redis.call('HINCRBY', KEY.usage, ARG.id, #new - #old)
  redis.call('HINCRBY', KEY.usage, '#total', #new - #old)
end
return {'ok'}
