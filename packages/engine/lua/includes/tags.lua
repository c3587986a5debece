-- A task's tags (its record's `tags` field, a JSON array) and the tenant's tag indexes: one
-- sorted set per tag beside the tenant's index (`<index>:tag:<hex of the tag>`, keys.ts'
-- tagIndex), holding the same members, so that a list by tag reads only that tag's tasks.
--- @include "generated/keys"

local function tag_index(index, tag)
  return index .. TAG_INFIX .. (string.gsub(tag, '.', function(c)
    return string.format('%02x', string.byte(c))
  end))
end

-- The tags of a record's `tags` field ('' or nil: none; the table then is shared: read it only).
local NO_TAGS = {}
local function tags_of(field)
  if not field or field == '' then return NO_TAGS end
  return cjson.decode(field)
end
