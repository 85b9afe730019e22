--[[
  Moves one batch of a dead node's reserved entries of one stream back to
  the queue: re-added to :rd with redeliveries + 1 (new ids, so the dead
  node's late acks match nothing), or to the dead stream past
  maxRedeliveries (a poison job that keeps killing nodes). Idempotent. A
  poison job of a workflow fails its node in the same step (no node will
  settle it), so the workflow carries on as after a failure: the caller
  names the keys of those workflows (a first call without them changes
  nothing and says which are needed).

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
local flows, order = {}, {}
do
  local k, a = 6, 6
  for _ = 1, intArg(5, 'number of workflows', 0) do
    if ARGV[a] == nil or ARGV[a] == '' then badArg(a, 'workflow id') end
    local m = intArg(a + 1, 'number of workflow queues', 1)
    flows[ARGV[a]] = { key = KEYS[k], base = k + 1, members = {} }
    order[#order + 1] = ARGV[a]
    k, a = k + 1 + 2 * m, a + 2
  end
  if k ~= #KEYS + 1 then error({ err = 'ERR prefork: recoverEntries: expected ' .. (k - 1) .. ' keys, got ' .. #KEYS }) end
  if a ~= #ARGV + 1 then badArg(a, 'unexpected argument: expected ' .. (a - 1) .. ' arguments, got ' .. #ARGV) end
end
if not redis.call('ZSCORE', recovering, node) then return { -1, 0 } end
local pending = redis.pcall('XPENDING', stream, GROUP, '-', '+', batch, node)
if type(pending) ~= 'table' or pending.err then return { 0, 0 } end

-- First, nothing written: the entries, and whether every poison job's workflow is named.
local entries, missing = {}, {}
for i, p in ipairs(pending) do
  local fields = readEntry(stream, p[1])
  if fields and not isMarker(fields) then
    entries[i] = fields
    if (tonumber(getField(fields, 'redeliveries')) or 0) + 1 > maxRedeliveries then
      local wid = wfRefOf(fields)
      if wid and not flows[wid] then missing[#missing + 1] = getField(fields, 'meta') end
    end
  end
end
if #missing > 0 then return { -2, 0, unpack(missing) } end

local now = nowMs()
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
      local wid, wnode = wfRefOf(fields)
      if wid then
        local members = flows[wid].members
        members[#members + 1] = string.format('%d', wnode)
        members[#members + 1] = 'f'
        members[#members + 1] = wfFailure(fields, 'WorkerLostError', reason, 'PREFORK_WORKER_LOST')
      end
    else
      indexJob(jobs, fields, 'r', redis.call('XADD', rd, '*', unpack(fields)), queue)
    end
    moved = moved + 1
  end
  ackDel(stream, id)
end
local out = { #pending, moved }
for _, wid in ipairs(order) do
  local flow = flows[wid]
  if #flow.members > 0 then
    local base = flow.base
    local ctx = wfContext(flow.key, jobs,
      function(q) return KEYS[base + 2 * q] end,
      function(q) return KEYS[base + 2 * q + 1] end,
      function(q) return queueOfKey(KEYS[base + 2 * q]) end,
      function() return now end)
    local state, reply = wfSettleRecord(ctx, flow.members)
    if state then
      out[#out + 1] = wid
      out[#out + 1] = state
      out[#out + 1] = reply
    end
  end
end
return out
