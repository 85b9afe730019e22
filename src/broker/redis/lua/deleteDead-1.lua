--[[
  Deletes the dead jobs listed (a dead job is in no index: only its entry goes).

  KEYS[1] {ns}:dead:<q>

  ARGV[1..] job ids (the entry id stands in for a job with no id field)

  Returns how many jobs were deleted.
]]
local dead = KEYS[1]
local wanted = {}
for i = 1, #ARGV do wanted[ARGV[i]] = true end
local deleted = 0
local after = '-'
while true do
  local entries = redis.call('XRANGE', dead, after, '+', 'COUNT', 500)
  if #entries == 0 then break end
  for _, e in ipairs(entries) do
    local id, fields = e[1], e[2]
    local jobId = getField(fields, 'id')
    if wanted[id] or (jobId and wanted[jobId]) then
      redis.call('XDEL', dead, id)
      deleted = deleted + 1
    end
  end
  after = '(' .. entries[#entries][1]
end
return deleted
