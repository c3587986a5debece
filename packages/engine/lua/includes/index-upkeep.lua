-- A tenant's index follows its tasks' own expiry (issue 27): each create adds INDEX_SWEEP to
-- what its index is swept by at the end of the call: the next entries after a cursor that walks
-- the index round and round (`<index>-sweep`) are looked at, and those whose record is gone
-- dropped, so the entries of expired or deleted tasks leave within (index size / INDEX_SWEEP)
-- creates, at a bounded cost per create; and the index key expires with its longest-lived task
-- (`until_ms`), so an idle tenant's is gone with its last task.
local INDEX_SWEEP = 3
local sweeps, sweep_order, index_until, index_until_text = {}, {}, {}, {}
local function plan_sweep(index, task_prefix, until_ms)
  local plan = sweeps[index]
  if not plan then
    plan = {index = index, prefix = task_prefix, n = 0}
    sweeps[index] = plan
    sweep_order[#sweep_order + 1] = plan
  end
  plan.n = plan.n + INDEX_SWEEP
  plan.until_ms = until_ms
end

-- Run once at the end of a call, after every create of it.
local function finish_sweeps()
  for _, plan in ipairs(sweep_order) do
    local key = plan.index .. '-sweep'
    local cursor = redis.call('GET', key) or ''
    local from = '-'
    if cursor ~= '' then from = '(' .. cursor end
    local batch = redis.call('ZRANGEBYLEX', plan.index, from, '+', 'LIMIT', 0, plan.n)
    for _, member in ipairs(batch) do
      local colon = string.find(member, ':', 1, true)
      if colon and redis.call('EXISTS', plan.prefix .. string.sub(member, colon + 1)) == 0 then
        redis.call('ZREM', plan.index, member)
      end
    end
    if #batch < plan.n then cursor = '' else cursor = batch[#batch] end
    redis.call('SET', key, cursor, 'PXAT', plan.until_ms)
  end
end

-- The index key lives until its longest-lived task expires: PEXPIREAT only ever moves it later.
local function index_expiry(index, expires_at, now)
  local at = tonumber(expires_at)
  local known = index_until[index]
  if known == nil then
    local left = redis.call('PTTL', index)
    if left >= 0 then known = tonumber(now) + left else known = 0 end
  end
  if at > known then
    redis.call('PEXPIREAT', index, expires_at)
    known = at
  elseif index_until[index] == known then
    return index_until_text[index]
  end
  local text = string.format('%d', known)
  index_until[index], index_until_text[index] = known, text
  return text
end
