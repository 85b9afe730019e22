--[[
  Drops every waiting job of a queue: entries of its streams not yet
  delivered to the group (reserved ones stay with their nodes) and every
  delayed job.

  KEYS[1] {ns}:q:<q>
  KEYS[2] {ns}:rd:<q>
  KEYS[3] {ns}:delayed:<q>
  KEYS[4] {ns}:jobs         the job index: the dropped jobs leave it (and
                            free their unique locks: releaseUniqueOf)

  Returns how many jobs were dropped (timer markers not counted).
]]
local dropped = 0
local function purgeStream(stream)
  local groups = redis.pcall('XINFO', 'GROUPS', stream)
  local after = '-'
  if type(groups) == 'table' and not groups.err then
    for _, g in ipairs(groups) do
      local name, last = nil, nil
      for i = 1, #g, 2 do
        if g[i] == 'name' then name = g[i + 1] end
        if g[i] == 'last-delivered-id' then last = g[i + 1] end
      end
      if name == GROUP then after = '(' .. last end
    end
  end
  while true do
    local entries = redis.call('XRANGE', stream, after, '+', 'COUNT', 500)
    if #entries == 0 then break end
    local ids, jobIds = {}, {}
    for _, e in ipairs(entries) do
      ids[#ids + 1] = e[1]
      if not isMarker(e[2]) then
        dropped = dropped + 1
        local jobId = jobIdOf(e[2])
        if jobId and jobId ~= '' then
          jobIds[#jobIds + 1] = jobId
          releaseUniqueOf(KEYS[4], e[2])
        end
      end
    end
    redis.call('XDEL', stream, unpack(ids))
    if #jobIds > 0 then redis.call('HDEL', KEYS[4], unpack(jobIds)) end
    after = '(' .. entries[#entries][1]
  end
end
purgeStream(KEYS[1])
purgeStream(KEYS[2])
local start = 0
while true do
  local members = redis.call('ZRANGE', KEYS[3], start, start + 499)
  if #members == 0 then break end
  local jobIds = {}
  for _, m in ipairs(members) do
    local fields = cmsgpack.unpack(m)
    local jobId = jobIdOf(fields)
    if jobId and jobId ~= '' then
      jobIds[#jobIds + 1] = jobId
      releaseUniqueOf(KEYS[4], fields)
    end
  end
  if #jobIds > 0 then redis.call('HDEL', KEYS[4], unpack(jobIds)) end
  start = start + 500
end
dropped = dropped + redis.call('ZCARD', KEYS[3])
redis.call('DEL', KEYS[3])
return dropped
