--[[
  Counts a queue's jobs by state (read only). A stream holds exactly the
  reserved entries (the group's pending list: acked entries are deleted) and
  the waiting ones, so waiting = XLEN - pending, less any timer markers among
  the undelivered entries (looked for in the first ARGV[1] of them only: past
  that, a few markers do not matter).

  KEYS[1] {ns}:q:<q>
  KEYS[2] {ns}:rd:<q>
  KEYS[3] {ns}:delayed:<q>
  KEYS[4] {ns}:dead:<q>

  ARGV[1] most undelivered entries scanned for markers

  Returns { waiting, reserved, delayed, dead }.
]]
local scan = intArg(1, 'scan limit', 0)
local waiting, reserved = 0, 0
local function countStream(stream)
  local len = redis.call('XLEN', stream)
  if len == 0 then return end
  local pending, after = 0, '-'
  local groups = redis.pcall('XINFO', 'GROUPS', stream)
  if type(groups) == 'table' and not groups.err then
    for _, g in ipairs(groups) do
      local name, last, p = nil, nil, 0
      for i = 1, #g, 2 do
        if g[i] == 'name' then name = g[i + 1] end
        if g[i] == 'last-delivered-id' then last = g[i + 1] end
        if g[i] == 'pending' then p = g[i + 1] end
      end
      if name == GROUP then
        pending = p
        after = '(' .. last
      end
    end
  end
  local markers = 0
  for _, e in ipairs(redis.call('XRANGE', stream, after, '+', 'COUNT', scan)) do
    if isMarker(e[2]) then markers = markers + 1 end
  end
  reserved = reserved + pending
  waiting = waiting + math.max(0, len - pending - markers)
end
countStream(KEYS[1])
countStream(KEYS[2])
return { waiting, reserved, redis.call('ZCARD', KEYS[3]), redis.call('XLEN', KEYS[4]) }
