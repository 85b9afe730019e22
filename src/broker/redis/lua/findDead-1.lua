--[[
  Finds dead jobs by id in one slice of a queue's dead set, writing
  nothing: the caller walks the set a slice per call (the cursor returned),
  then changeDead-3.lua acts on the entries found. One script over the
  whole set held Redis for as long as it read: a second per id asked at
  100,000 dead, during which no node fetched or beat.

  KEYS[1] {ns}:dead:<q>

  ARGV[1] 'retry' or 'delete'
  ARGV[2] where to start: '-' (the oldest entry) or an entry id, exclusive
  ARGV[3] most entries this call reads
  ARGV[4..] job ids (the entry id stands in for a job with no id field)

  Returns { next, found, kept }: the cursor of the next call ('' once the
  set is read to its end); the entries whose id was listed, oldest first,
  as (id listed, entry id) pairs, the id listed being of the job's and the
  entry's the one listed first; and, for a retry, the workflows' jobs
  whose id was listed, which a retry leaves dead (changeDead-3.lua says
  why), as (id, workflow id) pairs, oldest first.
]]
local dead = KEYS[1]
local retry = oneOfArg(1, 'mode', { 'retry', 'delete' }) == 'retry'
local start = ARGV[2]
if start ~= '-' and not string.find(start or '', '^%d+%-%d+$') then badArg(2, 'cursor: "-" or an entry id') end
local budget = intArg(3, 'entries per call', 1)
if #ARGV < 4 then badArg(4, 'job ids: at least one') end
-- id -> its place in ARGV, the first if listed twice.
local wanted = {}
for i = #ARGV, 4, -1 do wanted[ARGV[i]] = i end

local found, kept = {}, {}
local after = start == '-' and '-' or '(' .. start
local read = 0
while read < budget do
  local entries = redis.call('XRANGE', dead, after, '+', 'COUNT', math.min(500, budget - read))
  if #entries == 0 then return { '', found, kept } end
  for _, e in ipairs(entries) do
    local id, fields = e[1], e[2]
    local jobId = jobIdOf(fields)
    local asked = wanted[id] and id
    if jobId and wanted[jobId] and (not asked or wanted[jobId] < wanted[asked]) then asked = jobId end
    if asked then
      local flow = retry and wfRefOf(fields)
      if flow then
        -- Named by the id a listing shows (entry-codec.ts decodeJob: the entry's when its job has none).
        local shown = (jobId and jobId ~= '') and jobId or id
        if wanted[shown] then
          kept[#kept + 1] = shown
          kept[#kept + 1] = flow
        end
      else
        found[#found + 1] = asked
        found[#found + 1] = id
      end
    end
  end
  read = read + #entries
  after = '(' .. entries[#entries][1]
end
return { string.sub(after, 2), found, kept }
