-- The guard every side-channel script starts with: the task exists and is the tenant's, so a
-- door cannot reach the side channel of a task its caller does not own (another tenant's task
-- and a missing one reply the same). Needs KEY.task and ARG.tenant.
--- @include "generated/core"
if redis.call('HGET', KEY.task, F.tenant) ~= ARG.tenant then return {'absent'} end
