--[[
  Claims the due ticks of schedule entries: for each claim, if the entry's
  state is still what the node saw (the same definition hash, the same
  latest tick handled), the new latest tick is later than that and not
  ahead of the server's clock, the latest tick moves on and the tick's jobs are added to their
  queue in the same step. Every node due for a tick sends this; one wins,
  the others learn the new state. Compare-and-set: two nodes that both
  think they lead still fire a tick once.

  KEYS[1]            {ns}:queues              SET of queue names
  KEYS[2]            {ns}:jobs                the job index (see the prelude): each job enqueued is recorded
  KEYS[2c+1], [2c+2] {ns}:sched:<name>, {ns}:q:<queue>   per claim c

  ARGV[1]   number of claims
  per claim: hash, expectedLast, newLast, lastTick ('' when no job), queue, job count,
             then 6 values per job: id, task, payload, attempt, redeliveries, meta

  Returns { now, { { status, last, hash, definition }, ... } }: status 1
  claimed, 2 stale (last, hash in force; definition only when the hash
  differs), 3 early (newLast is after now), 4 unknown (no state stored, or
  none that reads: the node stores it again, see scheduleState), 5 refused
  (the queue's key holds another type, named in place of the definition:
  nothing written).
]]
local count = intArg(1, 'claims', 0)
if #KEYS ~= 2 + 2 * count then
  error({ err = 'ERR prefork: claimTicks expects 2 keys and 2 per claim, got ' .. #KEYS .. ' keys for ' .. count })
end
-- Every argument is checked before the first write.
local claims = {}
local at = 2
for c = 1, count do
  local claim = {
    hash = ARGV[at],
    expected = intArg(at + 1, 'expectedLast', 0),
    newLast = intArg(at + 2, 'newLast', 0),
    lastTick = ARGV[at + 3],
    queue = ARGV[at + 4],
    jobs = intArg(at + 5, 'job count', 0),
    first = at + 6,
  }
  if claim.hash == nil or claim.lastTick == nil or claim.queue == nil then badArg(at, 'claim') end
  at = claim.first + 6 * claim.jobs
  if at - 1 > #ARGV then badArg(#ARGV, 'job values: too few') end
  claims[c] = claim
end

-- The type of a claim's queue key when it cannot take the claim's jobs (another program wrote it),
-- else nil: Redis undoes nothing, so such a claim is refused on its own before its first XADD
-- rather than failing the call, and with it every other entry's claim, on every try.
local function refusedQueue(claim, stream)
  if claim.jobs == 0 then return nil end
  local kind = redis.call('TYPE', stream).ok
  if kind ~= 'stream' and kind ~= 'none' then return kind end
  return nil
end

local jobs = KEYS[2]
-- Redis undoes nothing: an index that cannot take the jobs fails the claim before its first XADD.
checkIndex(jobs)
local now = nowMs()
local out = {}
-- The job index entries not yet written (addJob), across all claims.
local places = {}
for c, claim in ipairs(claims) do
  local key, stream = KEYS[2 * c + 1], KEYS[2 * c + 2]
  local cur = scheduleState(key)
  if not cur then
    out[c] = { 4, 0, '', '' }
  elseif cur[1] ~= claim.hash then
    out[c] = { 2, cur[2], cur[1], redis.call('HGET', key, 'def') or '' }
  elseif tonumber(cur[2]) ~= claim.expected or claim.newLast <= claim.expected then
    out[c] = { 2, cur[2], cur[1], '' }
  elseif claim.newLast > now then
    out[c] = { 3, cur[2], cur[1], '' }
  else
    local refused = refusedQueue(claim, stream)
    if refused then
      out[c] = { 5, cur[2], cur[1], refused }
    else
      local lastId
      for j = 0, claim.jobs - 1 do
        local v = claim.first + 6 * j
        addJob(stream, claim.queue, jobs, places, unpack(ARGV, v, v + 5))
        lastId = ARGV[v]
      end
      if lastId then
        redis.call('HSET', key, 'last', string.format('%d', claim.newLast), 'lastTick', claim.lastTick,
          'lastRunAt', string.format('%d', now), 'lastJob', lastId)
        redis.call('SADD', KEYS[1], claim.queue)
      else
        redis.call('HSET', key, 'last', string.format('%d', claim.newLast))
      end
      out[c] = { 1, string.format('%d', claim.newLast), claim.hash, '' }
    end
  end
end
if #places > 0 then redis.call('HSET', jobs, unpack(places)) end
return { now, out }
