-- Shared helpers, prepended to every script by scripts.ts (Lua scripts cannot
-- include each other), after `local GROUP`: the consumer group's name, defined
-- once in keys.ts. A job entry has the fixed field set
-- id, task, payload, attempt, redeliveries, meta; a timer marker is an entry
-- with id == '' and task == '' whose meta is the due time (ms).

-- Argument checks. Redis does not roll back a script that fails half-way: a
-- script checks every argument before its first write, so a bad one fails the
-- call with nothing changed (never, say, a job acked and then not re-added).
local MAX_INT = 9007199254740991 -- 2^53 - 1: larger integers are not exact in Lua or JS

local function badArg(i, what)
  local shown = ARGV[i]
  if shown == nil then shown = '(missing)' else shown = '"' .. string.sub(shown, 1, 40) .. '"' end
  error({ err = 'ERR prefork: ARGV[' .. i .. '] (' .. what .. ') is ' .. shown })
end

-- ARGV[i] as an integer in [min, max] (max defaults to MAX_INT); tonumber alone takes 'nan', 'inf', '0x10'.
local function intArg(i, what, min, max)
  local raw = ARGV[i]
  local n = nil
  if raw ~= nil and string.find(raw, '^%-?%d+$') then n = tonumber(raw) end
  if n == nil or n < min or n > (max or MAX_INT) then badArg(i, what .. ': expected an integer >= ' .. min) end
  return n
end

-- ARGV[i] as one of the given strings.
local function oneOfArg(i, what, allowed)
  for _, a in ipairs(allowed) do
    if ARGV[i] == a then return a end
  end
  badArg(i, what .. ': expected one of ' .. table.concat(allowed, ', '))
end

local function nowMs()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- Flags every live node's lease as sendControl does (half a millisecond
-- added): each node's next beat reads the paused queues and the rates set at
-- run time again, so a setting stored here reaches the nodes even if its
-- control request is never sent (the sender died, Redis refused the request).
local function flagLeases(nodes, now)
  local live = redis.call('ZRANGE', nodes, string.format('%d', now), '+inf', 'BYSCORE', 'WITHSCORES')
  for i = 1, #live, 2 do
    local score = tonumber(live[i + 1])
    if score == math.floor(score) then redis.call('ZADD', nodes, 'XX', score + 0.5, live[i]) end
  end
end

-- A control request as stored in a node's list (sendControl): its JSON with
-- "expiresAt" (server ms) put first, which readers of the request ignore.
local function stampControl(request, expiresAt)
  return '{"expiresAt":' .. string.format('%d', expiresAt) .. ',' .. string.sub(request, 2)
end

-- Empties a node's control list: the requests still within their own ttl
-- (the list's expiry is only the latest request's).
local function takeControl(ctl, now)
  local raws = redis.call('LRANGE', ctl, 0, -1)
  if #raws == 0 then return raws end
  redis.call('DEL', ctl)
  local live = {}
  for _, raw in ipairs(raws) do
    local expiresAt = tonumber(string.match(raw, '^{"expiresAt":(%d+),'))
    if not expiresAt or expiresAt > now then live[#live + 1] = raw end
  end
  return live
end

local function getField(fields, name)
  local found = nil
  for i = 1, #fields, 2 do
    if fields[i] == name then found = fields[i + 1] end
  end
  return found
end

local function setField(fields, name, value)
  for i = 1, #fields, 2 do
    if fields[i] == name then
      fields[i + 1] = value
      return
    end
  end
  fields[#fields + 1] = name
  fields[#fields + 1] = value
end

-- Drops every `name` field (a retry or a give-back drops a rate-limit slot mark).
local function removeField(fields, name)
  for i = #fields - 1, 1, -2 do
    if fields[i] == name then
      table.remove(fields, i + 1)
      table.remove(fields, i)
    end
  end
end

local function bumpField(fields, name)
  local n = (tonumber(getField(fields, name)) or 0) + 1
  setField(fields, name, string.format('%d', n))
  return n
end

local function isMarker(fields)
  -- Fast path: the canonical field set in order (names distinct, so the
  -- positional values are the ones getField would find).
  if #fields == 12 and fields[1] == 'id' and fields[3] == 'task' then
    return fields[2] == '' and fields[4] == ''
  end
  return getField(fields, 'id') == '' and getField(fields, 'task') == ''
end

-- The body of one entry, or nil when it was deleted.
local function readEntry(stream, id)
  local r = redis.call('XRANGE', stream, id, id)
  if #r == 0 then return nil end
  return r[1][2]
end

-- Adds a job to a delayed set. When it becomes the earliest, a timer marker is
-- added to the queue's stream so a node blocked on that stream wakes and
-- learns the new due time (no fixed-interval poll anywhere).
local function schedule(delayed, stream, fields, due)
  local member = cmsgpack.pack(fields)
  redis.call('ZADD', delayed, due, member)
  local first = redis.call('ZRANGE', delayed, 0, 0)
  if first[1] == member then
    redis.call('XADD', stream, '*', 'id', '', 'task', '', 'payload', '', 'attempt', '0', 'redeliveries', '0', 'meta', string.format('%d', due))
  end
end

local function deadLetter(dead, deadMax, fields, reason, now)
  setField(fields, 'reason', reason)
  setField(fields, 'diedAt', string.format('%d', now))
  redis.call('XADD', dead, 'MAXLEN', deadMax, '*', unpack(fields))
end

-- Earliest score of a delayed set, or nil.
local function firstDue(delayed)
  local r = redis.call('ZRANGE', delayed, 0, 0, 'WITHSCORES')
  if #r == 0 then return nil end
  return tonumber(r[2])
end

-- XACK then XDEL (an acked entry left in a stream stays in memory); returns XACK's count.
local function ackDel(stream, id)
  local n = redis.call('XACK', stream, GROUP, id)
  redis.call('XDEL', stream, id)
  return n
end

-- Most ids per XACK/XDEL call (unpack pushes every id on Lua's C stack, capped at ~8000).
local ACK_CHUNK = 4000

-- XACK then XDEL of ARGV[first .. first + n - 1] on one stream, two commands
-- per chunk instead of two per id. Ids not pending change nothing (XACK
-- skips them, XDEL of a missing id is a no-op). Returns how many XACK acked.
local function ackDelMany(stream, first, n)
  local i = first
  local last = first + n - 1
  local acked = 0
  while i <= last do
    local j = math.min(last, i + ACK_CHUNK - 1)
    acked = acked + redis.call('XACK', stream, GROUP, unpack(ARGV, i, j))
    redis.call('XDEL', stream, unpack(ARGV, i, j))
    i = j + 1
  end
  return acked
end

-- The job index ({ns}:jobs, a HASH; docs/architecture.md "Where a job is"):
-- job id -> its place, 'q:<entry id>:<queue>' (the main stream), 'r:<entry
-- id>:<queue>' (:rd) or 'd:<due ms>:<queue>' (the delayed set). A reserved
-- job keeps its entry's place (the group's pending list says who holds it);
-- a job that ends leaves the index. Every script that moves a job updates it.

-- The queue a key names: {ns}:<kind>:<queue> (keys.ts; a namespace has no braces).
local function queueOfKey(key)
  return string.match(key, '^{[^}]*}:[a-z]+:(.*)$')
end

local function jobIdOf(fields)
  if fields[1] == 'id' then return fields[2] end
  return getField(fields, 'id')
end

-- An enqueue script calls this before its first write: Redis does not undo
-- a script's writes when a later command fails, so an index of the wrong
-- type (another program wrote it) must fail the script before the XADD.
local function checkIndex(jobs)
  local kind = redis.call('TYPE', jobs).ok
  if kind ~= 'hash' and kind ~= 'none' then
    error({ err = 'WRONGTYPE prefork: the job index ' .. jobs .. ' is a ' .. kind .. ', not a hash: nothing was enqueued' })
  end
end

local function indexJob(jobs, fields, kind, ref, queue)
  local id = jobIdOf(fields)
  if id and id ~= '' then redis.call('HSET', jobs, id, kind .. ':' .. ref .. ':' .. queue) end
end

-- The unique lock a job's entry names ({ns}:unique:<meta.u>, keys.ts unique; the tag taken from
-- the job index's name), or nil. Most jobs have none: no JSON decoded for them.
local function uniqueLockOf(jobs, fields)
  local meta = getField(fields, 'meta')
  if type(meta) ~= 'string' or not string.find(meta, '"u":', 1, true) then return nil end
  local ok, decoded = pcall(cjson.decode, meta)
  if not ok or type(decoded) ~= 'table' or type(decoded.u) ~= 'string' or decoded.u == '' then return nil end
  -- Second: the key's ttl in ms (entry-codec.ts meta.ut), 0 when it is held until the job ends.
  local ttl = tonumber(decoded.ut)
  if not ttl or ttl < 1 or ttl ~= math.floor(ttl) then ttl = 0 end
  return string.match(jobs, '^({[^}]*}):') .. ':unique:' .. decoded.u, ttl
end

-- A job that left the index for good without a settlement (purged, buried by a recovery) frees
-- its unique lock while it holds it (releaseUnique-2.lua does it after a settlement). Left
-- behind, the lock would name an id that a later, unrelated job may reuse (own ids): that job
-- would then seem to hold the key (enqueueOnce-n.lua checks only that the holder is indexed).
local function releaseUniqueOf(jobs, fields)
  local lock = uniqueLockOf(jobs, fields)
  if lock and redis.call('GET', lock) == jobIdOf(fields) then redis.call('DEL', lock) end
end

-- Drops a job from the index only while it is still at that place: a late
-- settle of an entry recovered meanwhile (a new place) leaves it.
local function unindexJob(jobs, fields, kind, ref, queue)
  local id = jobIdOf(fields)
  if id and id ~= '' and redis.call('HGET', jobs, id) == kind .. ':' .. ref .. ':' .. queue then
    redis.call('HDEL', jobs, id)
  end
end

-- Adds a ready job to a queue's stream (a job entry's six values, as a plain
-- XADD would) and its place to `places`, the index entries not yet written:
-- one HSET per ACK_CHUNK values (the unpack bound), not one per job. The
-- caller writes the rest.
local function addJob(stream, queue, jobs, places, id, task, payload, attempt, redeliveries, meta)
  local entry = redis.call('XADD', stream, '*', 'id', id, 'task', task, 'payload', payload, 'attempt', attempt,
    'redeliveries', redeliveries, 'meta', meta)
  places[#places + 1] = id
  places[#places + 1] = 'q:' .. entry .. ':' .. queue
  if #places >= ACK_CHUNK then
    redis.call('HSET', jobs, unpack(places))
    for i = #places, 1, -1 do places[i] = nil end
  end
end

-- Tells a client one job's result is ready: pushes `what` to its reply list, kept to `max`
-- entries for `ttl` ms. A list of another type (another program wrote it) is skipped, as
-- storeResults-n.lua does, so the caller's writes before it stand.
local function announceReply(list, what, max, ttl)
  if type(redis.pcall('LPUSH', list, what)) == 'number' then
    redis.call('LTRIM', list, 0, max - 1)
    redis.call('PEXPIRE', list, ttl)
  end
end

-- A schedule entry's state { hash, last } (publishSchedule, claimTicks), or nil when there is none
-- to go on: no key, a key of another type, or no hash or no whole-number latest tick in it (another
-- program wrote it). Read as a lost state, it is stored again: a damaged entry must neither fail
-- the other entries of the call nor hand a node a tick it cannot count from. The second value
-- says the key holds another type (publishSchedule deletes it before it stores the entry).
local function scheduleState(key)
  local cur = redis.pcall('HMGET', key, 'hash', 'last')
  if cur.err then return nil, true end
  if not cur[1] or not cur[2] or not string.match(cur[2], '^%d+$') then return nil, false end
  return cur, false
end

-- End of prelude.
