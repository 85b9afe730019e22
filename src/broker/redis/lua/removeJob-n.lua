--[[
  Takes one job out of its queue or delayed set, if it still waits where the
  job index says (the caller located it first) and no node reserved it. A
  workflow's member taken out fails its node in the same step (no node will
  settle it): what follows it carries on as after a failure, or its workflow
  would wait for ever; if that ended the workflow, its client is told here
  too. A unique job frees its key in the same step too (releaseUniqueOf): no
  call after this one that a dead client never makes.

  With a result to store (a revoke: its REVOKED result), the same step
  stores it, with a compare-and-set as swapResult-n.lua (a result that
  changed since the caller read it: nothing is done), announces it to the
  job's client and marks a job with its own id ended (unique.ts
  addEndedMarks). A job taken out by one call and given its result by a
  later one would be lost, in no queue and with no result, if that later
  call never came (a lost connection, Redis at maxmemory refusing it).
  The removal writes first, so at maxmemory the whole step runs (Redis
  refuses a script only at its first write that may grow memory).

  KEYS[1] {ns}:q:<q>
  KEYS[2] {ns}:rd:<q>
  KEYS[3] {ns}:delayed:<q>
  KEYS[4] {ns}:jobs          the job index (see the prelude)
  KEYS[5] <ns>:res:<id>      the job's result
  KEYS[6] {ns}:unique:i:<id> its ended mark (keys.ts endedMark)
  a workflow's member only (lib/workflow.lua):
  KEYS[7]         {ns}:wf:<id>      its workflow's record
  KEYS[2w+8]      {ns}:q:<queue w>  for each queue w of the workflow (w from 0)
  KEYS[2w+9]      {ns}:delayed:<queue w>

  ARGV[1]  the job id
  ARGV[2]  its place as located: 'q:<entry id>:<q>', 'r:<entry id>:<q>' or 'd:<due>:<q>'
  ARGV[3]  the prefix of a client's reply list (<ns>:reply:)
  ARGV[4]  a reply list's ttl (ms)
  ARGV[5]  the most entries a reply list keeps
  ARGV[6]  the result to store, '' for none (the removal alone: ARGV[7..11] unused)
  ARGV[7]  '1' when the caller read a result, '0' when it read none
  ARGV[8]  the result it read ('' when none)
  ARGV[9]  the result's ttl (ms)
  ARGV[10] the client to announce the job's result to ('' none)
  ARGV[11] '1' to mark the job ended, else '0'
  with KEYS[7]:
  ARGV[12] its workflow's id
  ARGV[13] its node in the workflow
  ARGV[14] its failure (msgpack of { id, name, error }), as a node records one

  Returns 1 (removed; { 1, state, client told } when that ended its
  workflow), 0 (it moved: locate it again), -1 (a node reserved it), -2
  (its result changed since it was read: read it again). Only 1 changes
  anything.
]]
local jobs, res, mark = KEYS[4], KEYS[5], KEYS[6]
local id, place = ARGV[1], ARGV[2]
if id == nil or id == '' then badArg(1, 'job id') end
local kind, ref = string.match(place or '', '^([qrd]):([^:]+):')
if not kind then badArg(2, 'place') end
local replyPrefix = ARGV[3]
if replyPrefix == nil or replyPrefix == '' then badArg(3, 'reply list prefix') end
local replyTtl, replyMax = intArg(4, 'reply list ttl (ms)', 1), intArg(5, 'reply list length', 1)
if ARGV[6] == nil then badArg(6, 'result to store') end
local store = ARGV[6] ~= ''
local had, ttl, client, marked = false, 0, '', false
if store then
  had = oneOfArg(7, 'had a result', { '0', '1' }) == '1'
  if ARGV[8] == nil then badArg(8, 'result read') end
  ttl = intArg(9, 'result ttl (ms)', 1)
  client = ARGV[10]
  if client == nil then badArg(10, 'client') end
  marked = oneOfArg(11, 'mark ended', { '0', '1' }) == '1'
end
local flow = #KEYS > 6
if flow then
  if #KEYS < 9 or #KEYS % 2 == 0 then error({ err = 'ERR prefork: removeJob: expected 6 keys, or 7 + 2 per workflow queue' }) end
  if ARGV[12] == nil or ARGV[12] == '' then badArg(12, 'workflow id') end
  intArg(13, 'workflow node', 0)
  if ARGV[14] == nil then badArg(14, 'workflow failure') end
end
if redis.call('HGET', jobs, id) ~= place then return 0 end

-- Read before anything is written: a key of another type fails the call with nothing changed.
local function changed()
  if not store then return false end
  local current = redis.call('GET', res)
  if had then return current ~= ARGV[8] end
  return current ~= false
end

-- The job is out (and out of the index): its result stored, its workflow records its failure.
local function removed()
  redis.call('HDEL', jobs, id)
  if store then
    redis.call('SET', res, ARGV[6], 'PX', ttl)
    if marked then redis.call('SET', mark, '1', 'PX', ttl) end
    if client ~= '' then announceReply(replyPrefix .. client, id, replyMax, replyTtl) end
  end
  if not flow then return 1 end
  local ctx = wfContext(KEYS[7], jobs,
    function(q) return KEYS[8 + 2 * q] end,
    function(q) return KEYS[9 + 2 * q] end,
    function(q) return queueOfKey(KEYS[8 + 2 * q]) end,
    nowMs)
  local state, reply = wfSettleRecord(ctx, { ARGV[13], 'f', ARGV[14] })
  if not state then return 1 end
  if reply ~= '' then announceReply(replyPrefix .. reply, ARGV[12], replyMax, replyTtl) end
  return { 1, state, reply }
end

if kind == 'd' then
  for _, member in ipairs(redis.call('ZRANGE', KEYS[3], ref, ref, 'BYSCORE')) do
    local fields = cmsgpack.unpack(member)
    if jobIdOf(fields) == id then
      if changed() then return -2 end
      redis.call('ZREM', KEYS[3], member)
      releaseUniqueOf(jobs, fields)
      return removed()
    end
  end
  return 0
end
local stream = KEYS[1]
if kind == 'r' then stream = KEYS[2] end
local pending = redis.pcall('XPENDING', stream, GROUP, ref, ref, 1)
if type(pending) == 'table' and not pending.err and #pending > 0 then return -1 end
local entry = redis.call('XRANGE', stream, ref, ref)[1]
if not entry then return 0 end
if changed() then return -2 end
redis.call('XDEL', stream, ref)
releaseUniqueOf(jobs, entry[2])
return removed()
