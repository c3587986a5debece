-- Fair share (decision 33): the task's BullMQ priority is its tenant's virtual start time. `fair`
-- is a hash of tenant -> the tag of its last task on this queue, `head` the queue's prioritized
-- set (BullMQ scores it priority * 2^32 + a counter), whose first job stands for the virtual
-- time now (kept under '#v' for when the set is empty): the tag its priority was written for,
-- less its own offset (the task's `priority` - 1, read off its record). A tenant's next tag is
-- one step (1 / its weight) after its last, but never before now: one with a backlog keeps its
-- order, one that was idle joins the head. An empty set may only mean that the jobs of the last
-- creates are on their way: the clock starts over only once the queue has been empty with no
-- create for a second ('#at').
-- Tags only grow, and under steady traffic the queue is never empty for a second, so a priority
-- is written relative to a base ('#b': priority = tag - base + offset) that moves up with the
-- head (decision 53): once the head is REBASE_AT past the base, the base moves up to it, and the
-- jobs already queued move down as much, MIGRATE_PER_CALL per call from the head, so the order
-- of the queue never changes and the work per call stays bounded. While they move ('#nb' the
-- new base, '#f' the frontier), a priority under '#f' is already written for the new base.
--- @include "generated/core"
--- @include "includes/once"
--- @include "bullmq/prioritized"

-- A tenant's tag and a queue's '#at' are kept in Lua through a call and written once at its end
-- (finish_fair), not once per task.
local virtual, tags, tag_order, at_ms = {}, {}, {}, {}
local REBASE_AT, MIGRATE_PER_CALL = 65536, 64
local coords = {}
local function fair_coords(fair)
  local c = coords[fair]
  if c then return c end
  local got = redis.call('HMGET', fair, '#b', '#nb', '#f')
  c = {b = tonumber(got[1]) or 0, nb = tonumber(got[2]), f = tonumber(got[3])}
  if not (c.nb and c.f) then c.nb, c.f = nil, nil end
  coords[fair] = c
  return c
end

local function num(x) return string.format('%.0f', x) end

-- The base a queued priority was written for.
local function base_of(c, p)
  if c.nb and p < c.f then return c.nb end
  return c.b
end

-- Moves the next jobs not yet moved (from the frontier on, in queue order) down to the new base:
-- their score keeps its counter, their hash its priority (BullMQ re-adds a retried job with it).
-- Each moved priority ends under the new frontier, so no job moves twice.
local function migrate(fair, head, c)
  local d = c.nb - c.b
  local jobs = redis.call('ZRANGEBYSCORE', head, num(c.f * BULLMQ_P32), '+inf', 'WITHSCORES', 'LIMIT', 0, MIGRATE_PER_CALL)
  local last = c.f
  for i = 1, #jobs, 2 do
    local score = tonumber(jobs[i + 1])
    local p = math.floor(score / BULLMQ_P32)
    bullmq_reprioritize(head, jobs[i], score, math.max(p - d, 1))
    last = p
  end
  if #jobs < MIGRATE_PER_CALL * 2 then
    c.b, c.nb, c.f = c.nb, nil, nil
    redis.call('HSET', fair, '#b', num(c.b))
    redis.call('HDEL', fair, '#nb', '#f')
  else
    c.f = last
    redis.call('HSET', fair, '#f', num(last))
  end
end

local function head_time(fair, head, now_ms, task_prefix)
  if virtual[head] then return virtual[head] end
  local first = redis.call('ZRANGE', head, 0, 0, 'WITHSCORES')
  local c = fair_coords(fair)
  local v
  if first[2] then
    local own = tonumber(redis.call('HGET', task_prefix .. first[1], F.priority) or '1') or 1
    local p = math.floor(tonumber(first[2]) / BULLMQ_P32)
    v = base_of(c, p) + math.max(p - (own - 1), 0)
    redis.call('HSET', fair, '#v', num(v))
  else
    local at = redis.call('HGET', fair, '#at')
    if not at or tonumber(now_ms) - tonumber(at) > 1000 then
      redis.call('DEL', fair)
      c.b, c.nb, c.f = 0, nil, nil
      v = 0
    else
      v = tonumber(redis.call('HGET', fair, '#v') or '0')
    end
  end
  if not c.nb and v - c.b > REBASE_AT then
    c.nb, c.f = c.b + math.floor(v - c.b) - 1, 1
    redis.call('HSET', fair, '#nb', num(c.nb), '#f', '1')
  end
  if c.nb and first_time('migrate ', head) then migrate(fair, head, c) end
  virtual[head] = v
  return v
end

local function fair_priority(fair, head, tenant, step, offset, now_ms, task_prefix)
  local v = head_time(fair, head, now_ms, task_prefix)
  -- A tenant's tag by queue then tenant (no key string made per task).
  local of_queue = tags[fair]
  if not of_queue then
    of_queue = {}
    tags[fair] = of_queue
  end
  local last = of_queue[tenant]
  if not last then
    last = tonumber(redis.call('HGET', fair, tenant) or '0')
    tag_order[#tag_order + 1] = {fair, tenant}
  end
  local tag = math.max(v, last + step)
  of_queue[tenant] = tag
  at_ms[fair] = now_ms
  local c = fair_coords(fair)
  local priority = math.min(math.max(math.ceil(tag - c.b), 1) + offset, BULLMQ_MAX_PRIORITY)
  -- Ahead of the frontier of a move under way: written for the new base, among the moved jobs.
  if c.nb and priority < c.f then priority = math.max(priority - (c.nb - c.b), 1) end
  return priority
end

local function finish_fair()
  local written = {}
  for _, t in ipairs(tag_order) do
    local fair, tenant = t[1], t[2]
    local tag = tags[fair][tenant]
    if written[fair] then
      redis.call('HSET', fair, tenant, tostring(tag))
    else
      redis.call('HSET', fair, tenant, tostring(tag), '#at', at_ms[fair])
      written[fair] = true
    end
  end
end
