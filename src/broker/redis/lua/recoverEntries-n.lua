--[[
  Moves one batch of a dead node's reserved entries of one stream back to
  the queue: re-added to :rd with redeliveries + 1 (new ids, so the dead
  node's late acks match nothing), or to the dead stream past
  maxRedeliveries (a poison job that keeps killing nodes). Idempotent. No
  node will settle a poison job, so this step writes its outcome: a FAILURE
  result (a WorkerLostError with the dead letter's reason, kept for the
  job's resultTtl, else ARGV[8]) announced to the client waiting for it, as
  storeResults does (the job's own ignoreResult: the state alone, not
  announced, as a revoke does); its result key and reply list are named
  from the prefixes ARGV[6] and ARGV[7] (a job's keys are known only once
  its entry is read; one Redis server: see docs/architecture.md). A poison
  job of a workflow also fails its node in the same step, so the workflow
  carries on as after a failure: the caller names the keys of those
  workflows (a first call without them changes nothing and says which are
  needed).

  KEYS[1] {ns}:recovering   ZSET (the claim must still exist)
  KEYS[2] the stream to scan: {ns}:q:<q> or {ns}:rd:<q>
  KEYS[3] {ns}:rd:<q>
  KEYS[4] {ns}:dead:<q>
  KEYS[5] {ns}:jobs         the job index (see the prelude)
  then for each workflow named in ARGV: {ns}:wf:<id> (lib/workflow.lua),
    then {ns}:q:<queue>, {ns}:delayed:<queue> for each of its queues, in its order

  ARGV[1] the dead node's id (its consumer name)
  ARGV[2] batch size
  ARGV[3] maxRedeliveries
  ARGV[4] deadMax
  ARGV[5] W, the number of workflows whose keys follow KEYS[5]
  ARGV[6] the prefix of a job's result key (<ns>:res:, keys.ts)
  ARGV[7] the prefix of a client's reply list (<ns>:reply:)
  ARGV[8] the broker's result ttl (ms): a job's without its own, and a reply list's
  ARGV[9] the most entries a reply list keeps
  then W times: the workflow's id, m (its number of queues)

  Returns { entries looked at (-1 = no claim), jobs moved, then per
  workflow that ended: its id, state, the client to tell ('' none) }, or
  { -2, 0, meta ... }: nothing changed, the batch holds poison jobs of
  workflows not named (their entries' meta): call again with their keys.
]]
local recovering, stream, rd, dead, jobs = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local queue = queueOfKey(rd)
local kind = 'q'
if stream == rd then kind = 'r' end
local node, batch, maxRedeliveries, deadMax = ARGV[1], intArg(2, 'batch size', 1), intArg(3, 'maxRedeliveries', 0), ARGV[4]
intArg(4, 'deadMax', 0)
local resPrefix, replyPrefix = ARGV[6], ARGV[7]
if resPrefix == nil or resPrefix == '' then badArg(6, 'result key prefix') end
if replyPrefix == nil or replyPrefix == '' then badArg(7, 'reply list prefix') end
local resultTtl, replyMax = intArg(8, 'result ttl (ms)', 1), intArg(9, 'reply list length', 1)
local flows, order = wfNamed('recoverEntries', 6, 5, 10)
if not redis.call('ZSCORE', recovering, node) then return { -1, 0 } end
local pending = redis.pcall('XPENDING', stream, GROUP, '-', '+', batch, node)
if type(pending) ~= 'table' or pending.err then return { 0, 0 } end

-- First, nothing written: the entries, and whether every poison job's workflow is named (each
-- workflow asked for once, however many of its members the batch buries: the caller refuses a repeat).
local entries, missing, asked = {}, {}, {}
for i, p in ipairs(pending) do
  local fields = readEntry(stream, p[1])
  if fields and not isMarker(fields) then
    entries[i] = fields
    if (tonumber(getField(fields, 'redeliveries')) or 0) + 1 > maxRedeliveries then
      local wid = wfRefOf(fields)
      if wid and not flows[wid] and not asked[wid] then
        asked[wid] = true
        missing[#missing + 1] = getField(fields, 'meta')
      end
    end
  end
end
if #missing > 0 then return { -2, 0, unpack(missing) } end

local now = nowMs()

-- The FAILURE of a poison job (shaped as a node's: consumer/outcome.ts, its error as error-codec.ts
-- serializes a WorkerLostError), stored and announced.
local function storeLost(fields, reason)
  local jobId = jobIdOf(fields)
  if not jobId or jobId == '' then return end
  local ok, meta = pcall(cjson.decode, getField(fields, 'meta') or '')
  if not ok or type(meta) ~= 'table' then meta = {} end
  local options = meta.o
  if type(options) ~= 'table' then options = {} end
  local ttl = resultTtl
  local own = options.resultTtl
  if type(own) == 'number' and own >= 1 and own == math.floor(own) then ttl = own end
  local record = { id = jobId, task = getField(fields, 'task') or '', queue = queue, state = 'FAILURE',
    retries = tonumber(getField(fields, 'attempt')) or 0, finishedAt = now }
  if type(meta.e) == 'number' then record.enqueuedAt = meta.e end
  local ignore = options.ignoreResult == true
  if ignore then
    record.ignoreResult = true
  else
    record.error = { name = 'WorkerLostError', message = reason, props = { code = 'PREFORK_WORKER_LOST' } }
  end
  redis.call('SET', resPrefix .. jobId, cmsgpack.pack(record), 'PX', ttl)
  -- A job with its own id (meta.x) ended: marked for as long as its result is kept, as a node's
  -- settlement marks it (unique.ts addEndedMarks), so the same id enqueued again returns it
  -- (enqueueOnce-n.lua) instead of running a job that killed its nodes once more.
  if not ignore and meta.x == 1 then
    redis.call('SET', string.match(jobs, '^({[^}]*}):') .. ':unique:i:' .. jobId, '1', 'PX', ttl)
  end
  if ignore or type(meta.r) ~= 'string' or meta.r == '' then return end
  announceReply(replyPrefix .. meta.r, jobId, replyMax, resultTtl)
end

local moved = 0
for i, p in ipairs(pending) do
  local id = p[1]
  local fields = entries[i]
  if fields then
    local n = bumpField(fields, 'redeliveries')
    if n > maxRedeliveries then
      local reason = 'delivered ' .. n .. ' times without an outcome (its node died each time)'
      deadLetter(dead, deadMax, fields, reason, now)
      unindexJob(jobs, fields, kind, id, queue)
      releaseUniqueOf(jobs, fields)
      storeLost(fields, reason)
      wfNoteFailure(flows, fields, 'WorkerLostError', reason, 'PREFORK_WORKER_LOST')
    else
      indexJob(jobs, fields, 'r', redis.call('XADD', rd, '*', unpack(fields)), queue)
    end
    moved = moved + 1
  end
  ackDel(stream, id)
end
return wfSettleNamed(flows, order, jobs, function() return now end, { #pending, moved })
