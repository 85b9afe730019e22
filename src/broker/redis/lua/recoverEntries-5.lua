--[[
  Moves one batch of a dead node's reserved entries of one stream back to
  the queue: re-added to :rd with redeliveries + 1 (new ids, so the dead
  node's late acks match nothing), or to the dead stream past
  maxRedeliveries (a poison job that keeps killing nodes). Idempotent.

  KEYS[1] {ns}:recovering   ZSET (the claim must still exist)
  KEYS[2] the stream to scan: {ns}:q:<q> or {ns}:rd:<q>
  KEYS[3] {ns}:rd:<q>
  KEYS[4] {ns}:dead:<q>
  KEYS[5] {ns}:jobs         the job index (see the prelude)

  ARGV[1] the dead node's id (its consumer name)
  ARGV[2] batch size
  ARGV[3] maxRedeliveries
  ARGV[4] deadMax

  Returns { entries looked at (-1 = no claim), jobs moved }.
]]
local recovering, stream, rd, dead, jobs = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local queue = queueOfKey(rd)
local kind = 'q'
if stream == rd then kind = 'r' end
local node, batch, maxRedeliveries, deadMax = ARGV[1], intArg(2, 'batch size', 1), intArg(3, 'maxRedeliveries', 0), ARGV[4]
intArg(4, 'deadMax', 0)
if not redis.call('ZSCORE', recovering, node) then return { -1, 0 } end
local pending = redis.pcall('XPENDING', stream, GROUP, '-', '+', batch, node)
if type(pending) ~= 'table' or pending.err then return { 0, 0 } end
local now = nowMs()
local moved = 0
for _, p in ipairs(pending) do
  local id = p[1]
  local fields = readEntry(stream, id)
  if fields and not isMarker(fields) then
    local n = bumpField(fields, 'redeliveries')
    if n > maxRedeliveries then
      deadLetter(dead, deadMax, fields, 'delivered ' .. n .. ' times without an outcome (its node died each time)', now)
      unindexJob(jobs, fields, kind, id, queue)
    else
      indexJob(jobs, fields, 'r', redis.call('XADD', rd, '*', unpack(fields)), queue)
    end
    moved = moved + 1
  end
  ackDel(stream, id)
end
return { #pending, moved }
