--[[
  One fetch cycle of a node, atomically: settle finished deliveries, check
  the node's lease, promote due delayed jobs, reserve up to `count` jobs.
  The number of keys varies: 3 + 4 per queue + 1 per workflow settled.

  KEYS[1]          {ns}:nodes                 ZSET node -> lease deadline
  KEYS[4(i-1)+2]   {ns}:q:<queue i>         stream (consumer group GROUP)
  KEYS[4(i-1)+3]   {ns}:rd:<queue i>        redelivered jobs, served first
  KEYS[4(i-1)+4]   {ns}:delayed:<queue i>   ZSET
  KEYS[4(i-1)+5]   {ns}:dead:<queue i>      dead letters
  KEYS[4Q+1+w]     {ns}:wf:<id>               workflow w's record (lib/workflow.lua)
  KEYS[#KEYS-1]    {ns}:jobs                  the job index (see the prelude)
  KEYS[#KEYS]      {ns}:unapplied:<call>      SET: the job ids of settlements not
                   applied here (written only when there are some, short-lived):
                   the storeResults call after this one does not overwrite their results
  The first P queues are the plan, in plan order; settlements may name more.

  ARGV[1] node id ('' = settle only: no lease check, no promotion, no read)
  ARGV[2] count: most jobs to reserve
  ARGV[3] Q, number of queues in KEYS
  ARGV[4] P, number of plan queues
  ARGV[5] deadMax (MAXLEN of dead streams)
  ARGV[6] most delayed jobs promoted per queue per call
  ARGV[7] S, number of settlements other than plain acks
  ARGV[8] A, number of ack groups
  ARGV[9 .. 9+P-1] quota of each plan queue
  then S groups of 6: op, queue index, stream kind, entry id, arg, job id
    op  r = retry (arg: delay ms; attempt + 1, redeliveries reset) | d = dead (arg: reason)
        g = give back to :rd (arg: '1' = redeliveries + 1, '0' = unchanged)
        s = defer to its rate-limit turn (arg: delay ms): marked `slot` = its due
            time, promoted to :rd when due (served before the queue's backlog)
        l = defer, holding no turn (arg: delay ms): marked `slot` = '0', it
            asks its bucket again when due
    (a `slot` mark says the job waits for a rate limit, not for a retry's
    backoff: Broker.locate reports it rateLimited; a retry and a give-back
    with '1' drop it: the next start asks again)
  then A ack groups, one per stream: queue index, stream kind, n, entry id × n,
    then the n job ids in the same order (plain acks: one XACK, one XDEL and
    one HDEL per stream, not per entry; one HMGET more when some entry was
    no longer pending)
  then W workflow groups, one per workflow key (W = #KEYS - 2 - 4Q), in key
    order, for the workflows whose jobs ended for good (their acks and dead
    letters are among the above): m, the queue index of each of the
    workflow's m queues, k, then k times: node, 's' (value) | 'f' (failure),
    msgpack blob
  stream kind  q = main stream | r = :rd

  Returns { fenced (0|1), nextDueAt (-1 = none), deliveries, now (-1 when not
  read), ended } where ended lists the workflows that ended, flat: key index,
  state, the client to tell ('' none); and
  nextDueAt and now are ms on the server's clock (TIME): the caller turns the
  due time into its own clock from the difference, so a client clock that is
  off never makes a job look due early (a busy loop) or late;
  deliveries is one flat array, per delivery: code, entry id, then
    code > 0: the values of id, task, payload, attempt, redeliveries, meta
              (the entry has exactly the canonical field set, in order)
    code < 0: { field, value, ... } (any other entry, as stored)
  with |code| = 2 × queue index + (1 for the :rd stream, 0 for the main one).
  (Flat and without field names: about half the reply, half the
  conversions in Redis and allocations in the client.)
  Settlements of entries this group no longer holds (a fenced node's late
  acks: the recovered copies have new ids) change nothing, and their job ids
  go to the unapplied set: storeResults then writes their results only where
  none is stored (they must not overwrite the outcome of the run that
  replaced them). A malformed
  argument fails the call before anything is changed.
]]
local nodes = KEYS[1]
local nodeId = ARGV[1]
local count = intArg(2, 'count', 0)
local nq = intArg(3, 'number of queues', 0)
local nw = #KEYS - 3 - 4 * nq
if nw < 0 then badArg(3, 'number of queues: expected at most (#KEYS - 3) / 4 = ' .. ((#KEYS - 3) / 4)) end
local jobs = KEYS[#KEYS - 1]
local unapplied = KEYS[#KEYS]
local np = intArg(4, 'number of plan queues', 0, nq)
local deadMax = ARGV[5]
intArg(5, 'deadMax', 0)
local promoteMax = intArg(6, 'promoteMax', 1)
local ns = intArg(7, 'number of settlements', 0)
local na = intArg(8, 'number of ack groups', 0)

-- 0. every argument checked before the first write (see the prelude)
for p = 1, np do intArg(8 + p, 'quota', 0) end
do
  local a = 9 + np
  for _ = 1, ns do
    local op = oneOfArg(a, 'settlement op', { 'r', 'd', 'g', 's', 'l' })
    intArg(a + 1, 'queue index', 1, nq)
    oneOfArg(a + 2, 'stream kind', { 'q', 'r' })
    if ARGV[a + 3] == nil or ARGV[a + 3] == '' then badArg(a + 3, 'entry id') end
    if op == 'r' then intArg(a + 4, 'retry delay (ms)', 0)
    elseif op == 's' or op == 'l' then intArg(a + 4, 'defer delay (ms)', 0)
    elseif op == 'g' then oneOfArg(a + 4, 'give-back redelivery flag', { '0', '1' })
    elseif ARGV[a + 4] == nil then badArg(a + 4, 'dead-letter reason') end
    if ARGV[a + 5] == nil then badArg(a + 5, 'job id') end
    a = a + 6
  end
  for _ = 1, na do
    intArg(a, 'queue index', 1, nq)
    oneOfArg(a + 1, 'stream kind', { 'q', 'r' })
    local n = intArg(a + 2, 'number of acks', 0, math.floor((#ARGV - a - 2) / 2))
    a = a + 3 + 2 * n
  end
  for _ = 1, nw do
    local m = intArg(a, 'number of workflow queues', 1)
    for x = 1, m do intArg(a + x, 'workflow queue index', 1, nq) end
    local k = intArg(a + 1 + m, 'number of workflow members', 1)
    for x = 0, k - 1 do
      intArg(a + 2 + m + 3 * x, 'workflow node', 0)
      oneOfArg(a + 3 + m + 3 * x, 'workflow outcome', { 's', 'f' })
      if ARGV[a + 4 + m + 3 * x] == nil then badArg(a + 4 + m + 3 * x, 'workflow outcome blob') end
    end
    a = a + 2 + m + 3 * k
  end
  if a ~= #ARGV + 1 then badArg(a, 'unexpected argument: expected ' .. (a - 1) .. ' arguments, got ' .. #ARGV) end
end
-- TIME only when needed (a settle-only call of plain acks never reads the clock).
local now = nil
local function clock()
  if not now then now = nowMs() end
  return now
end

-- k: 1 stream, 2 rd, 3 delayed, 4 dead
local function key(q, k) return KEYS[1 + (q - 1) * 4 + k] end
local function streamOf(q, kind)
  if kind == 'r' then return key(q, 2) end
  return key(q, 1)
end
local queueNames = {}
local function queueName(q)
  local name = queueNames[q]
  if not name then
    name = queueOfKey(key(q, 1))
    queueNames[q] = name
  end
  return name
end

-- Settlements not applied (rare: a fenced node's late ones): their job ids, for storeResults.
local skipped = {}

-- 1. settlements: retries, dead letters and give-backs one by one (each needs
-- XACK's answer: only an entry still pending in the group moves) ...
local a = 9 + np
for _ = 1, ns do
  local op, q, kind, id, arg = ARGV[a], tonumber(ARGV[a + 1]), ARGV[a + 2], ARGV[a + 3], ARGV[a + 4]
  local jobId = ARGV[a + 5]
  a = a + 6
  local stream = streamOf(q, kind)
  local fields = readEntry(stream, id)
  if ackDel(stream, id) == 1 and fields then
    if op == 'd' then
      deadLetter(key(q, 4), deadMax, fields, arg, clock())
      unindexJob(jobs, fields, kind, id, queueName(q))
    elseif op == 'g' then
      if arg == '1' then
        removeField(fields, 'slot')
        bumpField(fields, 'redeliveries')
      end
      indexJob(jobs, fields, 'r', redis.call('XADD', key(q, 2), '*', unpack(fields)), queueName(q))
    else
      -- r, s, l: to the delayed set, due in `arg` ms; only the fields they mark differ
      local due = clock() + tonumber(arg)
      if op == 'r' then
        -- A retry is an outcome: deliveries lost before it do not count toward a poison job.
        bumpField(fields, 'attempt')
        setField(fields, 'redeliveries', '0')
        removeField(fields, 'slot')
      elseif op == 's' then
        setField(fields, 'slot', string.format('%d', due))
      else
        setField(fields, 'slot', '0')
      end
      schedule(key(q, 3), key(q, 1), fields, due)
      indexJob(jobs, fields, 'd', string.format('%d', due), queueName(q))
    end
  else
    skipped[#skipped + 1] = jobId
  end
end
-- ... then plain acks in bulk, per stream, and their jobs out of the index
-- (each only while still at the acked entry: see unindexJob). When XACK
-- acked every entry, each was still this group's, and a job that moves
-- (retry, give-back, recovery) leaves its old entry acked in the same
-- script, so the index still names these entries (a live job's id is never
-- enqueued twice: enqueueOnce): one HDEL, no HMGET. Otherwise (a late ack
-- of a recovered entry among them) each is checked: one the index no longer
-- names there was not this group's to ack (recovered, or ended elsewhere).
for _ = 1, na do
  local q, kind, n = tonumber(ARGV[a]), ARGV[a + 1], tonumber(ARGV[a + 2])
  local acked = ackDelMany(streamOf(q, kind), a + 3, n)
  local i, last = a + 3 + n, a + 2 + 2 * n
  local suffix = ':' .. queueName(q)
  while i <= last do
    local j = math.min(last, i + ACK_CHUNK - 1)
    if acked == n then
      redis.call('HDEL', jobs, unpack(ARGV, i, j))
    else
      local places = redis.call('HMGET', jobs, unpack(ARGV, i, j))
      local gone = {}
      for k = 1, j - i + 1 do
        if places[k] == kind .. ':' .. ARGV[i - n + k - 1] .. suffix then
          gone[#gone + 1] = ARGV[i + k - 1]
        else
          skipped[#skipped + 1] = ARGV[i + k - 1]
        end
      end
      if #gone > 0 then redis.call('HDEL', jobs, unpack(gone)) end
    end
    i = j + 1
  end
  a = a + 3 + 2 * n
end
if #skipped > 0 then
  for from = 1, #skipped, ACK_CHUNK do
    redis.call('SADD', unapplied, unpack(skipped, from, math.min(from + ACK_CHUNK - 1, #skipped)))
  end
  -- Read (and deleted) by the storeResults call right after this one; kept a while should that one not come.
  redis.call('PEXPIRE', unapplied, 60000)
end

-- ... then workflows: record each member's outcome, count it, start what comes next
local ended = {}
for w = 1, nw do
  local m = tonumber(ARGV[a])
  local wf = KEYS[1 + 4 * nq + w]
  local qmap = {}
  for x = 1, m do qmap[x - 1] = tonumber(ARGV[a + x]) end
  local k = tonumber(ARGV[a + 1 + m])
  local ctx = wfContext(wf, jobs,
    function(q) return key(qmap[q], 1) end,
    function(q) return key(qmap[q], 3) end,
    function(q) return queueName(qmap[q]) end,
    clock)
  local members = {}
  for x = a + 2 + m, a + 1 + m + 3 * k do members[#members + 1] = ARGV[x] end
  local state, reply = wfSettleRecord(ctx, members)
  if state then
    ended[#ended + 1] = w
    ended[#ended + 1] = state
    ended[#ended + 1] = reply
  end
  a = a + 2 + m + 3 * k
end

if nodeId == '' then return { 0, -1, {}, -1, ended } end
clock() -- promotion below reads `now`

-- 2. the lease: gone means another node owns our jobs now. One that ran out and that no recovery
-- claimed yet is still ours (Redis itself may have been stopped): the next heartbeat renews it, and
-- the node starts nothing before that beat (its dispatch gate); a claim first takes these too.
if not redis.call('ZSCORE', nodes, nodeId) then return { 1, -1, {}, -1, ended } end

-- 3. promote due delayed jobs of the plan's queues, and learn the next due time
-- (one ZRANGE per queue when nothing is due: the earliest score decides)
local nextDue = -1
for p = 1, np do
  local first = firstDue(key(p, 3))
  if first and first <= now then
    local due = redis.call('ZRANGE', key(p, 3), '-inf', now, 'BYSCORE', 'LIMIT', 0, promoteMax)
    -- Out of the delayed set first: Redis at maxmemory refuses a script's first write that may grow
    -- memory (XADD), never one after it. A promotion moves a job and grows nothing; refused, a due job
    -- would fail every fetch, so no node would fetch (nor ack, which frees memory) until Redis had room.
    if #due > 0 then redis.call('ZREM', key(p, 3), unpack(due)) end
    for _, member in ipairs(due) do
      local fields = cmsgpack.unpack(member)
      -- A job holding its rate-limit turn goes to :rd, served first: behind a backlog its turn would pass.
      local slot = #fields ~= 12 and getField(fields, 'slot')
      if slot and slot ~= '0' then
        indexJob(jobs, fields, 'r', redis.call('XADD', key(p, 2), '*', unpack(fields)), queueName(p))
      else
        indexJob(jobs, fields, 'q', redis.call('XADD', key(p, 1), '*', unpack(fields)), queueName(p))
      end
    end
    first = firstDue(key(p, 3))
  end
  if first and (nextDue == -1 or first < nextDue) then nextDue = first end
end

-- 4. reserve: :rd before the stream of each queue; markers are consumed here
local out = {}
-- Streams found empty in this call stay empty till it ends (the script is atomic): the second pass skips them.
local drained = {}
local function take(p, kind, want)
  local stream = streamOf(p, kind)
  if drained[stream] then return 0 end
  local taken = 0
  while taken < want do
    local asked = want - taken
    local r = redis.pcall('XREADGROUP', 'GROUP', GROUP, nodeId, 'COUNT', asked, 'STREAMS', stream, '>')
    if type(r) == 'table' and r.err then
      if not string.find(r.err, 'NOGROUP', 1, true) then error(r.err) end
      redis.call('XGROUP', 'CREATE', stream, GROUP, '0', 'MKSTREAM')
      r = redis.call('XREADGROUP', 'GROUP', GROUP, nodeId, 'COUNT', asked, 'STREAMS', stream, '>')
    end
    if not r then drained[stream] = true break end
    local entries = r[1][2]
    for _, e in ipairs(entries) do
      if isMarker(e[2]) then
        ackDel(stream, e[1])
      else
        local f = e[2]
        local code = 2 * p
        if kind == 'r' then code = code + 1 end
        local n = #out
        if #f == 12 and f[1] == 'id' and f[3] == 'task' and f[5] == 'payload' and f[7] == 'attempt' and f[9] == 'redeliveries' and f[11] == 'meta' then
          out[n + 1], out[n + 2], out[n + 3], out[n + 4], out[n + 5] = code, e[1], f[2], f[4], f[6]
          out[n + 6], out[n + 7], out[n + 8] = f[8], f[10], f[12]
        else
          out[n + 1], out[n + 2], out[n + 3] = -code, e[1], f
        end
        taken = taken + 1
      end
    end
    if #entries < asked then drained[stream] = true break end
  end
  return taken
end

local got = 0
local function fill(p, want)
  if want <= 0 then return end
  local n = take(p, 'r', want)
  got = got + n
  if want > n then got = got + take(p, 'q', want - n) end
end
if count > 0 then
  -- first pass: each queue's quota; second pass: leftovers in plan order
  for p = 1, np do fill(p, math.min(tonumber(ARGV[8 + p]), count - got)) end
  for p = 1, np do fill(p, count - got) end
end
return { 0, nextDue, out, now, ended }
