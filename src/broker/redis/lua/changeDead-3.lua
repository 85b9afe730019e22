--[[
  Retries (back to the queue, attempt and redeliveries reset, its spent
  rate-limit turn dropped) or deletes dead jobs: the entries named (found
  by findDead-1.lua), or every one, a slice per call. A script never reads
  more than a slice: one over a dead set of 100,000 held Redis for seconds,
  during which no node fetched or beat (past Redis's busy threshold every
  client got BUSY, and a script that has written cannot be killed). A retry
  leaves a workflow's job dead: its workflow recorded its failure when it
  died (and went on, or ended), so a rerun would belong to nothing. A
  retry also leaves a job dead while a job with its id is in the index
  (waits, is delayed or runs: its own id enqueued again after it died, or
  the first of two dead copies of that id just requeued): two live jobs of
  one id would share one index entry, and the end of either would drop the
  other's. A deleted job is in no index: only its entry goes. A retried unique job
  takes its key back unless a live job holds it (retakeUnique), for its
  ttl again when it has one.

  KEYS[1] {ns}:dead:<q>
  KEYS[2] {ns}:q:<q>        (retry only)
  KEYS[3] {ns}:jobs         the job index (see the prelude; retry only)

  ARGV[1] 'retry' or 'delete'
  ARGV[2] 'some': ARGV[5..] are entry ids, acted on in that order (an
          entry no longer dead is skipped)
          'all': ARGV[5] where to start, '-' (the oldest) or an entry id,
          exclusive; ARGV[6] the last entry id to take (the newest when the
          caller began: a job that dies again meanwhile is not taken again);
          ARGV[7] most entries this call reads
  ARGV[3] the prefix of a job's result key (<ns>:res:, keys.ts): a retried
          job's stored failure is dropped, so its state reads as waiting
          and a wait for its result waits for the new run
  ARGV[4] the prefix of a client's reply list (<ns>:reply:): the failure's
          announcement its client has not read yet goes with it

  Returns, for 'some', { count, moved, inUse }: how many entries were moved
  (retried or deleted), their ids, and the job ids a retry left dead as in
  use; for 'all', { count, next, kept, inUse }: how many were moved, the
  cursor of the next call ('' once past the last), for a retry the
  workflows' jobs left dead, as (id, workflow id) pairs, oldest first, and
  the job ids left dead as in use, oldest first.
]]
local dead, stream = KEYS[1], KEYS[2]
local retry = oneOfArg(1, 'mode', { 'retry', 'delete' }) == 'retry'
local all = oneOfArg(2, 'which', { 'some', 'all' }) == 'all'
local resPrefix, replyPrefix = ARGV[3], ARGV[4]
if resPrefix == nil or resPrefix == '' then badArg(3, 'result key prefix') end
if replyPrefix == nil or replyPrefix == '' then badArg(4, 'reply list prefix') end

-- The dropped failure's announcement, where its client has not popped it:
-- its next wait would take it and end with the old run's outcome. An
-- announcement is the record itself (storeResults-n.lua's inline mark and
-- the stored bytes) or the job's id. pcall: a list another program wrote
-- over must not stop the retry half done. Not from a list longer than
-- UNANNOUNCE_SCAN_MAX: its client does not read it.
local UNANNOUNCE_SCAN_MAX = 1000
local function unannounce(job, id, key)
  local meta = getField(job, 'meta')
  if type(meta) ~= 'string' or not string.find(meta, '"r":', 1, true) then return end
  local ok, decoded = pcall(cjson.decode, meta)
  if not ok or type(decoded) ~= 'table' or type(decoded.r) ~= 'string' or decoded.r == '' then return end
  local list = replyPrefix .. decoded.r
  -- Each LREM scans the list. A client that waits keeps its list near empty; one this long does not read it
  -- (it may never wait), and two scans of 10,000 entries per job held Redis 0.4 s per slice of 1,000 jobs.
  local n = redis.pcall('LLEN', list)
  if type(n) ~= 'number' or n == 0 or n > UNANNOUNCE_SCAN_MAX then return end
  local record = redis.pcall('GET', key)
  if type(record) == 'string' then redis.pcall('LREM', list, 0, '\255' .. record) end
  redis.pcall('LREM', list, 0, id)
end

-- A unique job waits again: it takes its key back (enqueueOnce-n.lua's
-- rules), unless a job still in the index holds it (enqueued while this one
-- was dead; the key stays with it). Without this the key, released when the
-- job died, stayed free while it waits, and an equal enqueue added a second
-- job. Held until it ends, or for the option's ttl (meta.ut) from now, as an
-- enqueue holds it: a key with a ttl held for ever would block its task's
-- equal jobs for as long as this one waits.
local function retakeUnique(job)
  local lock, ttl = uniqueLockOf(KEYS[3], job)
  if not lock then return end
  local holder = redis.call('GET', lock)
  if holder and redis.call('HEXISTS', KEYS[3], holder) == 1 then return end
  if ttl > 0 then redis.call('SET', lock, jobIdOf(job), 'PX', ttl) else redis.call('SET', lock, jobIdOf(job)) end
end

local function requeue(fields)
  local job = {}
  for i = 1, #fields, 2 do
    local f = fields[i]
    -- A rate-limit turn (slot) was spent by the run that died: the job asks its bucket again.
    if f ~= 'reason' and f ~= 'diedAt' and f ~= 'slot' then
      job[#job + 1] = f
      if f == 'attempt' or f == 'redeliveries' then job[#job + 1] = '0' else job[#job + 1] = fields[i + 1] end
    end
  end
  local id = jobIdOf(job)
  if id and id ~= '' then
    retakeUnique(job)
    unannounce(job, id, resPrefix .. id)
    redis.call('DEL', resPrefix .. id)
  end
  indexJob(KEYS[3], job, 'q', redis.call('XADD', stream, '*', unpack(job)), queueOfKey(stream))
end

local count = 0
-- Job ids a retry left dead because a job with that id is in the index.
local inUse = {}
-- One entry moved: requeued on a retry unless it is a workflow's job (then left: 'flow') or its id is in use
-- (then left: 'inUse'); true when moved.
local function move(id, fields)
  if retry then
    if wfRefOf(fields) then return 'flow' end
    local jobId = jobIdOf(fields)
    if jobId and jobId ~= '' and redis.call('HEXISTS', KEYS[3], jobId) == 1 then
      inUse[#inUse + 1] = jobId
      return 'inUse'
    end
    requeue(fields)
  end
  redis.call('XDEL', dead, id)
  count = count + 1
  return true
end

if not all then
  -- Every id checked before the first write (XRANGE fails on a malformed one).
  for i = 5, #ARGV do
    if not string.find(ARGV[i], '^%d+%-%d+$') then badArg(i, 'entry id') end
  end
  local moved = {}
  for i = 5, #ARGV do
    local e = redis.call('XRANGE', dead, ARGV[i], ARGV[i])[1]
    if e and move(e[1], e[2]) == true then moved[#moved + 1] = e[1] end
  end
  return { count, moved, inUse }
end

local start, last = ARGV[5], ARGV[6]
if start ~= '-' and not string.find(start or '', '^%d+%-%d+$') then badArg(5, 'cursor: "-" or an entry id') end
if not string.find(last or '', '^%d+%-%d+$') then badArg(6, 'last entry id') end
local budget = intArg(7, 'entries per call', 1)
local kept = {}
local after = start == '-' and '-' or '(' .. start
local read = 0
while read < budget do
  local entries = redis.call('XRANGE', dead, after, last, 'COUNT', math.min(500, budget - read))
  if #entries == 0 then return { count, '', kept, inUse } end
  for _, e in ipairs(entries) do
    local id, fields = e[1], e[2]
    if move(id, fields) == 'flow' then
      local jobId = jobIdOf(fields)
      -- Named by the id a listing shows (entry-codec.ts decodeJob: the entry's when its job has none).
      kept[#kept + 1] = (jobId and jobId ~= '') and jobId or id
      kept[#kept + 1] = wfRefOf(fields)
    end
  end
  read = read + #entries
  after = '(' .. entries[#entries][1]
end
return { count, string.sub(after, 2), kept, inUse }
