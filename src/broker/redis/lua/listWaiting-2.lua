--[[
  One page of a queue's waiting jobs (read only), in the order they will be
  fetched: the redelivered stream first, then the queue's stream. Waiting
  entries are those after the group's last-delivered id (acked entries are
  deleted; the ones before it are reserved). O(limit): one XRANGE with COUNT
  per stream, timer markers skipped (they count toward the limit, so a page
  may hold fewer jobs; the cursor still moves on).

  KEYS[1] {ns}:rd:<q>
  KEYS[2] {ns}:q:<q>

  ARGV[1] "r" | "q": the stream the cursor is in
  ARGV[2] the cursor's entry id ('' for the start of that stream)
  ARGV[3] most entries to read

  Returns { next stream ('' when nothing follows), next entry id, { kind, id, fields, ... } }.
]]
local phase = oneOfArg(1, 'stream', { 'r', 'q' })
local after = ARGV[2]
if after ~= '' and not string.find(after, '^%d+%-%d+$') then badArg(2, 'entry id') end
local limit = intArg(3, 'limit', 1)

local function lastDelivered(stream)
  local groups = redis.pcall('XINFO', 'GROUPS', stream)
  if type(groups) ~= 'table' or groups.err then return nil end
  for _, g in ipairs(groups) do
    local name, last = nil, nil
    for i = 1, #g, 2 do
      if g[i] == 'name' then name = g[i + 1] end
      if g[i] == 'last-delivered-id' then last = g[i + 1] end
    end
    if name == GROUP then return last end
  end
  return nil
end

local function idLess(a, b)
  local am, as = string.match(a, '^(%d+)%-(%d+)$')
  local bm, bs = string.match(b, '^(%d+)%-(%d+)$')
  am, bm = tonumber(am), tonumber(bm)
  if am ~= bm then return am < bm end
  return tonumber(as) < tonumber(bs)
end

local streams = { r = KEYS[1], q = KEYS[2] }
local order = { 'q' }
if phase == 'r' then order = { 'r', 'q' } end
local out, read = {}, 0
local nextKind, nextId = '', ''
for i, kind in ipairs(order) do
  local start = lastDelivered(streams[kind])
  if i == 1 and after ~= '' and (start == nil or idLess(start, after)) then start = after end
  if start == nil then start = '-' else start = '(' .. start end
  for _, e in ipairs(redis.call('XRANGE', streams[kind], start, '+', 'COUNT', limit - read)) do
    read = read + 1
    if not isMarker(e[2]) then
      out[#out + 1] = kind
      out[#out + 1] = e[1]
      out[#out + 1] = e[2]
    end
    nextKind, nextId = kind, e[1]
  end
  if read >= limit then return { nextKind, nextId, out } end
end
return { '', '', out }
