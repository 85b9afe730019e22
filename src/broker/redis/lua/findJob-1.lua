--[[
  Looks for a job by id in one page of a queue's stream, redelivery stream
  or delayed set, and takes it out when nobody holds it: a delayed job
  always, a stream entry only when it was never delivered (its id is past
  the group's last delivered id; a delivered one is in some node's hands,
  and that node skips it or stops it).

  KEYS[1] {ns}:q:<queue> | {ns}:rd:<queue> (stream) or {ns}:delayed:<queue> (ZSET)

  ARGV[1] the job id
  ARGV[2] 's' (a stream) | 'd' (a delayed set)
  ARGV[3] where to start: a stream entry id, exclusive ('-' = the start); a rank in the delayed set
  ARGV[4] most entries looked at
  ARGV[5] '1' to take the job out when nobody holds it

  Returns { 1, the entry's fields, taken out (0|1) } when found, else
  { 0, where to go on ('' = the end) }.
]]
local key, id = KEYS[1], ARGV[1]
local kind = oneOfArg(2, 'kind', { 's', 'd' })
local most = intArg(4, 'most entries', 1)
local remove = oneOfArg(5, 'take out', { '0', '1' }) == '1'

local function idOf(fields)
  if fields[1] == 'id' then return fields[2] end
  return getField(fields, 'id')
end

if kind == 'd' then
  local from = intArg(3, 'rank', 0)
  local members = redis.call('ZRANGE', key, from, from + most - 1)
  for _, member in ipairs(members) do
    local ok, fields = pcall(cmsgpack.unpack, member)
    if ok and type(fields) == 'table' and idOf(fields) == id then
      if remove then redis.call('ZREM', key, member) end
      return { 1, fields, remove and 1 or 0 }
    end
  end
  if #members < most then return { 0, '' } end
  return { 0, tostring(from + most) }
end

local start = ARGV[3]
if start ~= '-' and not string.find(start or '', '^%d+%-%d+$') then badArg(3, 'entry id') end
if start ~= '-' then start = '(' .. start end
local entries = redis.call('XRANGE', key, start, '+', 'COUNT', most)
for _, e in ipairs(entries) do
  if idOf(e[2]) == id and not isMarker(e[2]) then
    local taken = 0
    if remove then
      -- Never delivered: past the group's last delivered id (or no group yet).
      local last = '0-0'
      local ok, groups = pcall(redis.call, 'XINFO', 'GROUPS', key)
      if ok then
        for _, g in ipairs(groups) do
          local name, delivered
          for i = 1, #g, 2 do
            if g[i] == 'name' then name = g[i + 1] end
            if g[i] == 'last-delivered-id' then delivered = g[i + 1] end
          end
          if name == GROUP and delivered then last = delivered end
        end
      end
      local function parts(s)
        local ms, seq = string.match(s, '^(%d+)-(%d+)$')
        return tonumber(ms), tonumber(seq)
      end
      local ems, eseq = parts(e[1])
      local lms, lseq = parts(last)
      if ems > lms or (ems == lms and eseq > lseq) then
        redis.call('XDEL', key, e[1])
        taken = 1
      end
    end
    return { 1, e[2], taken }
  end
end
if #entries < most then return { 0, '' } end
return { 0, entries[#entries][1] }
