-- A side-channel call runs once whatever ioredis does: it sends a call again after it reconnects
-- when the reply was lost with the connection, and Redis would run it twice (a push queue its
-- message twice, a shift or a drain take more and lose what the first run took). Each call names
-- a key of its own (KEY.op, from a random id the caller makes); a call that wrote or took leaves
-- its answer there for OP_MS, and a second run answers that instead (tests/message-resend.test.ts).
-- Needs KEY.op.
local OP_MS = 300000

-- What this call answered when Redis ran it before, or nil.
local function op_answer()
  return redis.call('GET', KEY.op) or nil
end

local function op_record(answer)
  redis.call('SET', KEY.op, answer, 'PX', OP_MS)
end
