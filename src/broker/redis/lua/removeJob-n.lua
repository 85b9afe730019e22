--[[
  Takes one job out of its queue or delayed set, if it still waits where the
  job index says (the caller located it first) and no node reserved it. A
  workflow's member taken out fails its node in the same step (no node will
  settle it): what follows it carries on as after a failure, or its workflow
  would wait for ever. A unique job frees its key in the same step too
  (releaseUniqueOf): no call after this one that a dead client never makes.

  KEYS[1] {ns}:q:<q>
  KEYS[2] {ns}:rd:<q>
  KEYS[3] {ns}:delayed:<q>
  KEYS[4] {ns}:jobs         the job index (see the prelude)
  a workflow's member only (lib/workflow.lua):
  KEYS[5]         {ns}:wf:<id>      its workflow's record
  KEYS[2w+6]      {ns}:q:<queue w>  for each queue w of the workflow (w from 0)
  KEYS[2w+7]      {ns}:delayed:<queue w>

  ARGV[1] the job id
  ARGV[2] its place as located: 'q:<entry id>:<q>', 'r:<entry id>:<q>' or 'd:<due>:<q>'
  with KEYS[5]:
  ARGV[3] its node in the workflow
  ARGV[4] its failure (msgpack of { id, name, error }), as a node records one

  Returns 1 (removed; { 1, state, client to tell } when that ended its
  workflow), 0 (it moved: locate it again), -1 (a node reserved it).
]]
local jobs = KEYS[4]
local id, place = ARGV[1], ARGV[2]
if id == nil or id == '' then badArg(1, 'job id') end
local kind, ref = string.match(place or '', '^([qrd]):([^:]+):')
if not kind then badArg(2, 'place') end
local flow = #KEYS > 4
if flow then
  if #KEYS < 7 or #KEYS % 2 == 0 then error({ err = 'ERR prefork: removeJob: expected 4 keys, or 5 + 2 per workflow queue' }) end
  intArg(3, 'workflow node', 0)
  if ARGV[4] == nil then badArg(4, 'workflow failure') end
end
if redis.call('HGET', jobs, id) ~= place then return 0 end

-- The job is out (and out of the index): its workflow records its failure.
local function removed()
  redis.call('HDEL', jobs, id)
  if not flow then return 1 end
  local ctx = wfContext(KEYS[5], jobs,
    function(q) return KEYS[6 + 2 * q] end,
    function(q) return KEYS[7 + 2 * q] end,
    function(q) return queueOfKey(KEYS[6 + 2 * q]) end,
    nowMs)
  local state, reply = wfSettleRecord(ctx, { ARGV[3], 'f', ARGV[4] })
  if state then return { 1, state, reply } end
  return 1
end

if kind == 'd' then
  for _, member in ipairs(redis.call('ZRANGE', KEYS[3], ref, ref, 'BYSCORE')) do
    local fields = cmsgpack.unpack(member)
    if jobIdOf(fields) == id then
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
if redis.call('XDEL', stream, ref) == 0 then return 0 end
if entry then releaseUniqueOf(jobs, entry[2]) end
return removed()
