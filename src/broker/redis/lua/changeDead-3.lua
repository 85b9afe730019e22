--[[
  Retries (back to the queue, attempt and redeliveries reset, its spent
  rate-limit turn dropped) or deletes
  dead jobs, in one scan of the dead set for any number of ids. A retry
  leaves a workflow's job dead: its workflow recorded its failure when it
  died (and went on, or ended), so a rerun would belong to nothing. A
  deleted job is in no index: only its entry goes. A retried unique job
  takes its key back unless a live job holds it (retakeUnique).

  KEYS[1] {ns}:dead:<q>
  KEYS[2] {ns}:q:<q>        (retry only)
  KEYS[3] {ns}:jobs         the job index (see the prelude; retry only)

  ARGV[1] 'retry' or 'delete'
  ARGV[2] '1' = every dead job, '0' = only the jobs listed next
  ARGV[3..] job ids (the entry id stands in for a job with no id field)

  A retry requeues the jobs of the ids listed id by id, in the order listed
  (each id's oldest first), as when one id was asked at a time; with '1',
  oldest first.

  Returns { count, moved, kept }: how many entries were moved (retried or
  deleted); the ids listed that matched one of them, each once, in the
  order listed (an entry both its ids name counts for the one listed
  first); and, for a retry, the workflows' jobs whose id was listed (every
  one with '1') left dead, as id, workflow id pairs, oldest first.
]]
local dead, stream = KEYS[1], KEYS[2]
local retry = oneOfArg(1, 'mode', { 'retry', 'delete' }) == 'retry'
local all = oneOfArg(2, 'all flag', { '0', '1' }) == '1'
-- id -> its place in ARGV, the first if listed twice.
local wanted = {}
for i = #ARGV, 3, -1 do wanted[ARGV[i]] = i end

-- A unique job waits again: it takes its key back (enqueueOnce-n.lua's
-- rules), unless a job still in the index holds it (enqueued while this one
-- was dead; the key stays with it). Without this the key, released when the
-- job died, stayed free while it waits, and an equal enqueue added a second
-- job. Held until it ends: the option's ttl is not in the entry.
local function retakeUnique(job)
  local lock = uniqueLockOf(KEYS[3], job)
  if not lock then return end
  local holder = redis.call('GET', lock)
  if holder and redis.call('HEXISTS', KEYS[3], holder) == 1 then return end
  redis.call('SET', lock, jobIdOf(job))
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
  if id and id ~= '' then retakeUnique(job) end
  indexJob(KEYS[3], job, 'q', redis.call('XADD', stream, '*', unpack(job)), queueOfKey(stream))
end

-- Listed: requeued after the scan, id by id in the order listed (as when one id was asked at a time).
local count, kept, seen, back = 0, {}, {}, {}
local after = '-'
while true do
  local entries = redis.call('XRANGE', dead, after, '+', 'COUNT', 500)
  if #entries == 0 then break end
  for _, e in ipairs(entries) do
    local id, fields = e[1], e[2]
    local jobId = jobIdOf(fields)
    -- The id it was asked by: of its job's and its entry's, the one listed first.
    local asked = wanted[id] and id
    if jobId and wanted[jobId] and (not asked or wanted[jobId] < wanted[asked]) then asked = jobId end
    if all or asked then
      local flow = retry and wfRefOf(fields)
      if flow then
        -- Named by the id a listing shows (entry-codec.ts decodeJob: the entry's when its job has none).
        local shown = (jobId and jobId ~= '') and jobId or id
        if all or wanted[shown] then
          kept[#kept + 1] = shown
          kept[#kept + 1] = flow
        end
      else
        if retry and all then
          requeue(fields)
        elseif retry then
          local at = wanted[asked]
          back[at] = back[at] or {}
          back[at][#back[at] + 1] = fields
        end
        redis.call('XDEL', dead, id)
        count = count + 1
        if asked then seen[asked] = true end
      end
    end
  end
  after = '(' .. entries[#entries][1]
end
local moved = {}
for i = 3, #ARGV do
  if wanted[ARGV[i]] == i then
    for _, fields in ipairs(back[i] or {}) do requeue(fields) end
    if seen[ARGV[i]] then moved[#moved + 1] = ARGV[i] end
  end
end
return { count, moved, kept }
