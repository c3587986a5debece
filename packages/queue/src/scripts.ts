/**
 * Lua scripts for longrun's task records. Each runs atomically in Redis, so a transition and its
 * guard ("not already terminal") can never interleave with another writer.
 */

/**
 * KEYS: task, index, idempotency (or the task key when none).
 * ARGV: expiresAt, indexMember, pruneBound, idempotencyValue ('' = none), indexTtlMs, field, value, …
 * Returns {'ok'} or {'dup', existingIdempotencyValue}.
 */
export const CREATE_TASK = `
if ARGV[4] ~= '' then
  local existing = redis.call('GET', KEYS[3])
  if existing then return {'dup', existing} end
  redis.call('SET', KEYS[3], ARGV[4], 'PXAT', ARGV[1])
end
redis.call('HSET', KEYS[1], unpack(ARGV, 6))
redis.call('PEXPIREAT', KEYS[1], ARGV[1])
redis.call('ZADD', KEYS[2], 0, ARGV[2])
redis.call('ZREMRANGEBYLEX', KEYS[2], ARGV[3], '+')
redis.call('PEXPIRE', KEYS[2], ARGV[5])
return {'ok'}
`;

/**
 * KEYS: task. ARGV: requiredStatus ('' = any non-terminal), inputToAppend ('' = none), field, value, …
 * Returns {'ok', previousStatus}, {'refused', currentStatus} or {'missing'}.
 */
export const TRANSITION_TASK = `
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return {'missing'} end
if status == 'completed' or status == 'cancelled' or status == 'failed' then return {'refused', status} end
if ARGV[1] ~= '' and status ~= ARGV[1] then return {'refused', status} end
if ARGV[2] ~= '' then
  local inputs = redis.call('HGET', KEYS[1], 'inputs') or '[]'
  if inputs == '[]' then inputs = '[' .. ARGV[2] .. ']' else inputs = string.sub(inputs, 1, -2) .. ',' .. ARGV[2] .. ']' end
  redis.call('HSET', KEYS[1], 'inputs', inputs)
end
if #ARGV > 2 then redis.call('HSET', KEYS[1], unpack(ARGV, 3)) end
return {'ok', status}
`;

/**
 * KEYS: task, index, idempotency (or the task key). ARGV: indexMember, dropIdempotency ('1'/'0').
 * Deletes a terminal task. Returns {'ok'}, {'refused', status} or {'missing'}.
 */
export const FORGET_TASK = `
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return {'missing'} end
if status ~= 'completed' and status ~= 'cancelled' and status ~= 'failed' then return {'refused', status} end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
if ARGV[2] == '1' then redis.call('DEL', KEYS[3]) end
return {'ok'}
`;

/**
 * KEYS: task, index, idempotency (or the task key). ARGV: indexMember, idempotencyValue ('' = none).
 * Takes back a task whose job was never added; the idempotency key only if it is still ours.
 */
export const DISCARD_TASK = `
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
if ARGV[2] ~= '' and redis.call('GET', KEYS[3]) == ARGV[2] then redis.call('DEL', KEYS[3]) end
return 1
`;
