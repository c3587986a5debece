--[[
  Whether a child task may start its handler, from its parent's record (issue 40, items 3 and 4):
  not once the parent was cancelled (the worker cancels the child instead), and not before the
  parent lists it (its maker records children a chunk at a time right after making them): a
  child that ran unlisted could outlive a cancel of its parent that reads the list, if its maker
  died before listing it. Its worker gives such a job back for a moment; the maker's next chunk
  note, or its run made again after a crash (same children, same ids), lists it. A parent that is
  gone, or finished otherwise, lets it run, as before.

  Input:
    KEYS[1] parent        the parent's record
    ARGV[1] child         the child task's id
  Output:
    {'run'}               listed, or the parent is gone or finished (not cancelled)
    {'cancelled'}         the parent was cancelled: cancel the child, run nothing
    {'wait'}              the parent is still making its children and has not listed this one
]]
--- @include "generated/core"

local got = redis.call('HMGET', KEY.parent, F.status, F.childTaskIds)
local status = got[1]
if not status then return {'run'} end
if status == LIFECYCLE.cancel.to then return {'cancelled'} end
if got[2] and string.find(got[2], '"' .. ARG.child .. '"', 1, true) then return {'run'} end
if LIFECYCLE.step.from[status] then return {'wait'} end
return {'run'}
