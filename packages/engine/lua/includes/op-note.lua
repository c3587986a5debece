-- A change a caller acts on (a cancel, an answer, a waitpoint's completion) runs once whatever
-- ioredis does: it sends a call again after it reconnects when the reply was lost with the
-- connection, and the call's second run would be refused by its own first change (the caller
-- answering 409 for a change that took effect, and skipping what follows it: a cancel's
-- broadcast, an answer's wake-up). Such a call names itself (ARG.op, a random id; '' = none):
-- the change it writes notes its reply in the record (`op`: '<op> <reply…>', words), and the
-- same call run again answers that reply (tests/transition-resend.test.ts). Needs ARG.op.
--- @include "generated/core"

-- The reply this call gave when Redis ran it before (its words after 'ok'), or nil.
local function noted_reply(task)
  if ARG.op == '' then return nil end
  local noted = redis.call('HGET', task, F.op)
  if not noted then return nil end
  local words = {}
  for word in string.gmatch(noted, '%S+') do words[#words + 1] = word end
  if words[1] ~= ARG.op then return nil end
  words[1] = 'ok'
  return words
end

-- Adds the note of `reply` ({'ok', word, …}) to a change's fields; no op: nothing.
local function note_reply(changes, reply)
  if ARG.op == '' then return end
  changes[#changes + 1] = F.op
  changes[#changes + 1] = ARG.op .. ' ' .. table.concat(reply, ' ', 2)
end
