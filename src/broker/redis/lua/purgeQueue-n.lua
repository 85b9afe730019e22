--[[
  Drops every waiting job of a queue: entries of its streams not yet
  delivered to the group (reserved ones stay with their nodes) and every
  delayed job. Two modes.

  'slice' drops, a slice per call, the waiting jobs that belong to no
  workflow: a purge of a large queue in one script held Redis for as long
  as it read (200,000 jobs: 3.4 s; past its busy threshold every client
  gets BUSY, and a script that has written cannot be killed), and a
  one-shot command's timeout ran out while the purge went on. The caller
  walks the queue as it was when the purge began: each stream up to its
  last entry then, the delayed set for as many members as it held then.

  'all' then drops every waiting job left, the workflows' members among
  them: a member dropped fails its node in the same step, as
  removeJob-n.lua does (no node will settle it, or its workflow would
  wait for ever), after every drop: what its failure starts (an onError, in
  this queue too) was not waiting, and stays. The caller names the keys of
  those workflows: a call that meets a member of one it did not name changes
  nothing and says which are needed (as recoverEntries-n.lua).

  KEYS[1] {ns}:q:<q>
  KEYS[2] {ns}:rd:<q>
  KEYS[3] {ns}:delayed:<q>
  KEYS[4] {ns}:jobs         the job index: the dropped jobs leave it (and
                            free their unique locks: releaseUniqueOf)
  'all': then for each workflow named in ARGV: {ns}:wf:<id> (lib/workflow.lua),
    then {ns}:q:<queue>, {ns}:delayed:<queue> for each of its queues, in its order

  ARGV[1] 'slice' or 'all'
  'slice': ARGV[2] most entries this call reads; ARGV[3], ARGV[4] where
    KEYS[1], KEYS[2] are read from ('-' or an entry id, exclusive; '' when
    done); ARGV[5], ARGV[6] their last entry ids when the purge began;
    ARGV[7] the delayed members kept so far (workflows': skipped by rank);
    ARGV[8] the delayed members left to read
    Returns { jobs dropped, ARGV[3], ARGV[4], ARGV[7], ARGV[8] as they are
    for the next call }: the purge's slices are done when both cursors are
    '' and no delayed member is left to read
  'all': ARGV[2] W, the number of workflows whose keys follow KEYS[4]
    then W times: the workflow's id, m (its number of queues)
    Returns { jobs dropped (timer markers not counted), then per workflow
    that ended: its id, state, the client to tell ('' none) }, or { -2, meta
    ... }: nothing changed, members of workflows not named wait (their
    entries' meta, one per workflow): call again with their keys.
]]
local jobs = KEYS[4]
local queue = queueOfKey(KEYS[1])
local mode = oneOfArg(1, 'mode', { 'slice', 'all' })

-- The group's last delivered entry of a stream (nil: none, or no group).
local function lastDelivered(stream)
  local groups = redis.pcall('XINFO', 'GROUPS', stream)
  local last = nil
  if type(groups) == 'table' and not groups.err then
    for _, g in ipairs(groups) do
      local name, id = nil, nil
      for i = 1, #g, 2 do
        if g[i] == 'name' then name = g[i + 1] end
        if g[i] == 'last-delivered-id' then id = g[i + 1] end
      end
      if name == GROUP then last = id end
    end
  end
  return last
end

-- The first entry of a stream not yet delivered to the group ('-': all).
local function undelivered(stream)
  local last = lastDelivered(stream)
  return last and '(' .. last or '-'
end

-- A job dropped: out of the index, its unique lock free. False for a timer marker (not a job).
local function unindexDropped(fields)
  if isMarker(fields) then return false end
  local jobId = jobIdOf(fields)
  if jobId and jobId ~= '' then
    redis.call('HDEL', jobs, jobId)
    releaseUniqueOf(jobs, fields)
  end
  return true
end

if mode == 'slice' then
  local budget = intArg(2, 'entries per call', 1)
  local cursors = { ARGV[3], ARGV[4] }
  for s = 1, 2 do
    local c, last = cursors[s], ARGV[4 + s]
    if c ~= '' and c ~= '-' and not string.find(c or '', '^%d+%-%d+$') then badArg(2 + s, 'cursor') end
    if c ~= '' and not string.find(last or '', '^%d+%-%d+$') then badArg(4 + s, 'last entry id') end
  end
  local kept = intArg(7, 'delayed members kept', 0)
  local left = intArg(8, 'delayed members left', 0)
  local dropped, read = 0, 0
  -- The later of two exclusive starts ('-' or '(<id>').
  local function later(a, b)
    if a == '-' then return b end
    if b == '-' then return a end
    local am, as = string.match(a, '^%((%d+)%-(%d+)$')
    local bm, bs = string.match(b, '^%((%d+)%-(%d+)$')
    am, as, bm, bs = tonumber(am), tonumber(as), tonumber(bm), tonumber(bs)
    if am ~= bm then return am > bm and a or b end
    return as > bs and a or b
  end
  for s = 1, 2 do
    local stream, last = KEYS[s], ARGV[4 + s]
    while cursors[s] ~= '' and read < budget do
      -- Never an entry delivered meanwhile: it is a node's now.
      local from = later(cursors[s] == '-' and '-' or '(' .. cursors[s], undelivered(stream))
      local want = math.min(500, budget - read)
      local entries = redis.call('XRANGE', stream, from, last, 'COUNT', want)
      local ids = {}
      for _, e in ipairs(entries) do
        if not wfRefOf(e[2]) then
          ids[#ids + 1] = e[1]
          if unindexDropped(e[2]) then dropped = dropped + 1 end
        end
      end
      if #ids > 0 then redis.call('XDEL', stream, unpack(ids)) end
      read = read + #entries
      cursors[s] = #entries < want and '' or entries[#entries][1]
    end
  end
  while left > 0 and read < budget do
    local want = math.min(500, budget - read, left)
    local members = redis.call('ZRANGE', KEYS[3], kept, kept + want - 1)
    if #members == 0 then left = 0 break end
    local gone = {}
    for _, m in ipairs(members) do
      local fields = cmsgpack.unpack(m)
      if wfRefOf(fields) then
        kept = kept + 1
      else
        gone[#gone + 1] = m
        if unindexDropped(fields) then dropped = dropped + 1 end
      end
    end
    if #gone > 0 then redis.call('ZREM', KEYS[3], unpack(gone)) end
    read = read + #members
    left = left - #members
  end
  return { dropped, cursors[1], cursors[2], kept, left }
end

local flows, order = wfNamed('purgeQueue', 5, 2, 3)

-- Calls visit(fields, entry id) for each waiting entry of a stream, 500 at a time, then drop(ids).
local function eachEntry(stream, visit, drop)
  local after = undelivered(stream)
  while true do
    local entries = redis.call('XRANGE', stream, after, '+', 'COUNT', 500)
    if #entries == 0 then break end
    local ids = {}
    for _, e in ipairs(entries) do
      ids[#ids + 1] = e[1]
      visit(e[2])
    end
    if drop then drop(ids) end
    after = '(' .. entries[#entries][1]
  end
end

-- Calls visit(fields) for each delayed job (timer markers are stream entries: none here).
local function eachDelayed(visit)
  local start = 0
  while true do
    local members = redis.call('ZRANGE', KEYS[3], start, start + 499)
    if #members == 0 then break end
    for _, m in ipairs(members) do visit(cmsgpack.unpack(m)) end
    start = start + 500
  end
end

-- First, nothing written: is every waiting member's workflow named?
local missing, asked = {}, {}
local function check(fields)
  if isMarker(fields) then return end
  local wid = wfRefOf(fields)
  if wid and not flows[wid] and not asked[wid] then
    asked[wid] = true
    missing[#missing + 1] = getField(fields, 'meta')
  end
end
eachEntry(KEYS[1], check)
eachEntry(KEYS[2], check)
eachDelayed(check)
-- Not unpack(missing): a queue may hold members of more workflows than unpack takes.
if #missing > 0 then
  local out = { -2 }
  for _, meta in ipairs(missing) do out[#out + 1] = meta end
  return out
end

local dropped = 0
local function drop(fields)
  if not unindexDropped(fields) then return end
  dropped = dropped + 1
  local jobId = jobIdOf(fields)
  if not jobId or jobId == '' then return end
  wfNoteFailure(flows, fields, 'JobWithdrawnError',
    'job ' .. jobId .. ' was purged from queue ' .. queue .. ' before it started', 'PREFORK_JOB_WITHDRAWN')
end
local function xdel(stream)
  return function(ids) redis.call('XDEL', stream, unpack(ids)) end
end
eachEntry(KEYS[1], drop, xdel(KEYS[1]))
eachEntry(KEYS[2], drop, xdel(KEYS[2]))
eachDelayed(drop)
redis.call('DEL', KEYS[3])

-- Then the workflows of the members dropped carry on, as after any failure.
return wfSettleNamed(flows, order, jobs, nowMs, { dropped })
