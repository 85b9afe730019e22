--[[
  Drops every waiting job of a queue: entries of its streams not yet
  delivered to the group (reserved ones stay with their nodes) and every
  delayed job. A workflow's member dropped fails its node in the same step,
  as removeJob-n.lua does (no node will settle it, or its workflow would
  wait for ever), after every drop: what its failure starts (an onError, in
  this queue too) was not waiting, and stays. The caller names the keys of
  those workflows: a call that meets a member of one it did not name changes
  nothing and says which are needed (as recoverEntries-n.lua).

  KEYS[1] {ns}:q:<q>
  KEYS[2] {ns}:rd:<q>
  KEYS[3] {ns}:delayed:<q>
  KEYS[4] {ns}:jobs         the job index: the dropped jobs leave it (and
                            free their unique locks: releaseUniqueOf)
  then for each workflow named in ARGV: {ns}:wf:<id> (lib/workflow.lua),
    then {ns}:q:<queue>, {ns}:delayed:<queue> for each of its queues, in its order

  ARGV[1] W, the number of workflows whose keys follow KEYS[4]
  then W times: the workflow's id, m (its number of queues)

  Returns { jobs dropped (timer markers not counted), then per workflow
  that ended: its id, state, the client to tell ('' none) }, or { -2, meta
  ... }: nothing changed, members of workflows not named wait (their
  entries' meta, one per workflow): call again with their keys.
]]
local jobs = KEYS[4]
local queue = queueOfKey(KEYS[1])
local flows, order = wfNamed('purgeQueue', 5, 1, 2)

-- The first entry of a stream not yet delivered to the group ('-': all).
local function undelivered(stream)
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
  return after
end

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
  if isMarker(fields) then return end
  dropped = dropped + 1
  local jobId = jobIdOf(fields)
  if not jobId or jobId == '' then return end
  redis.call('HDEL', jobs, jobId)
  releaseUniqueOf(jobs, fields)
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
