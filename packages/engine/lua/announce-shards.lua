--[[
  Announces a shard count (decision 37): raises the stored count to the one given unless a
  higher one is there, so a shard no longer given new tasks is still served.

  Input:
    KEYS[1] count   the shard count (`<prefix>:shards`)
    ARGV[1] count   the count this process places tasks on
  Output:
    {'ok', count}   the count now stored
]]
local current = tonumber(redis.call('GET', KEY.count) or '0')
local count = tonumber(ARG.count)
if count > current then
  redis.call('SET', KEY.count, ARG.count)
  return {'ok', count}
end
return {'ok', current}
