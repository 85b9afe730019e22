-- Workflows (docs/architecture.md, "Workflows"), prepended after the prelude
-- to the scripts that enqueue a workflow or settle its jobs. A workflow is
-- one HASH, {ns}:wf:<id>:
--   id, reply, ttl      its id, the client told when it ends, its TTL (ms): from its end, not before
--   state, out          PENDING | SUCCESS | FAILURE, and the root's value or failure
--   fgroup              the outermost group a failure went through (none: a chain step failed)
--   n:<i>               node i: "<kind> parent pos first count queue immutable delay eta onSuccess onError"
--                       kind L (a job), C (chain), D (chord: a chain of a group and a callback), G (group)
--   j:<i>               a job node's entry fields (cmsgpack; meta without "e"), enqueued when the node starts
--   v:<i>               how node i ended: 's' .. msgpack value, or 'f' .. msgpack failure
--   c:<i>               a group's count of ended children
--   o                   the callbacks started and not ended: the record expires only once the
--                       workflow ended and this is 0 (a callback's own callbacks need it)
-- Nodes are numbered breadth-first, so a node's children are first .. first + count - 1.
-- A context `ctx` names the keys: wf, jobs, stream(q), delayed(q), queue(q)
-- (q: the workflow's queue index), now(); the functions fill ctx.cache,
-- ctx.places (job index entries), ctx.arrived (group -> children ended), ctx.ended and
-- ctx.opened (callbacks started less those ended, added to o by wfFlush);
-- ctx.bodies and ctx.unpacked hold job entries read or checked already (packed, unpacked).

local function wfContext(wf, jobs, stream, delayed, queue, clockFn)
  -- One TIME per script call, not one per step started: the call is one atomic step anyway.
  local t = nil
  local function now()
    if not t then t = clockFn() end
    return t
  end
  return { wf = wf, jobs = jobs, stream = stream, delayed = delayed, queue = queue, now = now,
    cache = {}, bodies = {}, unpacked = {}, places = {}, arrived = {}, ended = nil, opened = 0 }
end

local function wfParse(raw)
  local v = {}
  for num in string.gmatch(string.sub(raw, 3), '%-?%d+') do v[#v + 1] = tonumber(num) end
  return { kind = string.sub(raw, 1, 1), parent = v[1], pos = v[2], first = v[3], count = v[4], queue = v[5],
    immutable = v[6] == 1, delay = v[7], eta = v[8], onSuccess = v[9], onError = v[10] }
end

-- Loads nodes lo .. hi (and the bodies of the jobs among them) in HMGETs of ACK_CHUNK fields.
local function wfLoad(ctx, lo, hi)
  local i = lo
  while i <= hi do
    local j = math.min(hi, i + ACK_CHUNK - 1)
    local names, missing = {}, {}
    for k = i, j do
      if not ctx.cache[k] then names[#names + 1] = 'n:' .. k; missing[#missing + 1] = k end
    end
    if #names > 0 then
      local raws = redis.call('HMGET', ctx.wf, unpack(names))
      local bodies = {}
      for x, k in ipairs(missing) do
        if raws[x] then
          ctx.cache[k] = wfParse(raws[x])
          if ctx.cache[k].kind == 'L' and not ctx.bodies[k] then bodies[#bodies + 1] = k end
        end
      end
      if #bodies > 0 then
        local fields = {}
        for x, k in ipairs(bodies) do fields[x] = 'j:' .. k end
        local raw = redis.call('HMGET', ctx.wf, unpack(fields))
        for x, k in ipairs(bodies) do ctx.bodies[k] = raw[x] end
      end
    end
    i = j + 1
  end
end

local function wfNode(ctx, i)
  if not ctx.cache[i] then wfLoad(ctx, i, i) end
  return ctx.cache[i]
end

local function wfArrayHeader(n)
  if n < 16 then return string.char(0x90 + n) end
  if n < 65536 then return string.char(0xdc, math.floor(n / 256), n % 256) end
  return string.char(0xdd, math.floor(n / 16777216) % 256, math.floor(n / 65536) % 256, math.floor(n / 256) % 256, n % 256)
end

-- The msgpack array `payload` with the msgpack value `first` in front of its elements.
local function wfPrepend(payload, first)
  local b = string.byte(payload, 1)
  local n, at
  if b and b >= 0x90 and b <= 0x9f then
    n, at = b - 0x90, 2
  elseif b == 0xdc then
    local b1, b2 = string.byte(payload, 2, 3)
    n, at = b1 * 256 + b2, 4
  elseif b == 0xdd then
    local b1, b2, b3, b4 = string.byte(payload, 2, 5)
    n, at = ((b1 * 256 + b2) * 256 + b3) * 256 + b4, 6
  else
    return payload -- not an array (the Client always sends one): left as is
  end
  return wfArrayHeader(n + 1) .. first .. string.sub(payload, at)
end

-- Starts node i, given the previous step's result `input` (msgpack bytes, or nil).
local wfStart
wfStart = function(ctx, i, input)
  local node = wfNode(ctx, i)
  if not node then return end
  if node.kind == 'L' then
    -- A callback (outside the tree; not the root): the record outlives the workflow's end until it ends.
    if node.parent < 0 and i ~= 0 then ctx.opened = ctx.opened + 1 end
    -- Unpacked already when the enqueue script checked it; taken once (the fields are changed below).
    local fields = ctx.unpacked[i]
    if fields then
      ctx.unpacked[i] = nil
    else
      local body = ctx.bodies[i] or redis.call('HGET', ctx.wf, 'j:' .. i)
      if not body then return end
      fields = cmsgpack.unpack(body)
    end
    if input and not node.immutable then fields[6] = wfPrepend(fields[6], input) end
    -- Enqueued now (its meta is stored without "e": workflows.ts), so its queue wait counts from its start.
    local rest = string.sub(fields[12], 2)
    local sep = ','
    if string.sub(rest, 1, 1) == '}' then sep = '' end
    fields[12] = '{"e":' .. string.format('%d', ctx.now()) .. sep .. rest
    local q = node.queue
    local due = nil
    if node.delay >= 0 then due = ctx.now() + node.delay elseif node.eta >= 0 then due = node.eta end
    if due and due > ctx.now() then
      schedule(ctx.delayed(q), ctx.stream(q), fields, due)
      indexJob(ctx.jobs, fields, 'd', string.format('%d', due), ctx.queue(q))
    else
      local entry = redis.call('XADD', ctx.stream(q), '*', unpack(fields))
      ctx.places[#ctx.places + 1] = fields[2]
      ctx.places[#ctx.places + 1] = 'q:' .. entry .. ':' .. ctx.queue(q)
    end
  elseif node.kind == 'G' then
    wfLoad(ctx, node.first, node.first + node.count - 1)
    for k = 0, node.count - 1 do wfStart(ctx, node.first + k, input) end
  else
    wfStart(ctx, node.first, input)
  end
end

-- Node i ended (ok: `blob` is its value, else its failure); its v:<i> is written.
local wfEnd
local function wfEndInner(ctx, i, ok, blob)
  local mark = 'f'
  if ok then mark = 's' end
  redis.call('HSET', ctx.wf, 'v:' .. i, mark .. blob)
  wfEnd(ctx, i, ok, blob)
end
wfEnd = function(ctx, i, ok, blob)
  local node = wfNode(ctx, i)
  if node.kind == 'L' then
    if ok and node.onSuccess >= 0 then wfStart(ctx, node.onSuccess, blob) end
    if not ok and node.onError >= 0 then wfStart(ctx, node.onError, blob) end
  end
  if node.parent < 0 then
    if i == 0 then
      local state = 'FAILURE'
      if ok then state = 'SUCCESS' end
      -- No expiry while pending (a step may run or wait longer than the TTL): wfSettleRecord sets it
      -- at the end, or once the last callback still to run ended.
      redis.call('HSET', ctx.wf, 'state', state, 'out', blob)
      ctx.ended = state
    end
    return
  end
  local p = wfNode(ctx, node.parent)
  if p.kind == 'G' then
    ctx.arrived[node.parent] = (ctx.arrived[node.parent] or 0) + 1
  elseif not ok then
    wfEndInner(ctx, node.parent, false, blob)
  elseif node.pos == p.count - 1 then
    wfEndInner(ctx, node.parent, true, blob)
  else
    wfStart(ctx, p.first + node.pos + 1, blob)
  end
end

-- Counts the children that ended into their groups (one HINCRBY per group);
-- a group whose last child ended reads its children's outcomes once and ends.
local function wfCount(ctx)
  local g = next(ctx.arrived)
  while g do
    local k = ctx.arrived[g]
    ctx.arrived[g] = nil
    local node = wfNode(ctx, g)
    if redis.call('HINCRBY', ctx.wf, 'c:' .. g, k) == node.count then
      local parts, failed = {}, nil
      local i, hi = node.first, node.first + node.count - 1
      while i <= hi do
        local j = math.min(hi, i + ACK_CHUNK - 1)
        local names = {}
        for x = i, j do names[#names + 1] = 'v:' .. x end
        for _, v in ipairs(redis.call('HMGET', ctx.wf, unpack(names))) do
          if not v then v = 's\192' end -- a child's outcome lost (cannot happen while the hash lives): nil
          if not failed and string.sub(v, 1, 1) == 'f' then failed = string.sub(v, 2) end
          parts[#parts + 1] = string.sub(v, 2)
        end
        i = j + 1
      end
      if failed then
        redis.call('HSET', ctx.wf, 'fgroup', g)
        wfEndInner(ctx, g, false, failed)
      else
        wfEndInner(ctx, g, true, wfArrayHeader(node.count) .. table.concat(parts))
      end
    end
    g = next(ctx.arrived)
  end
end

-- Jobs ended for good: `members` is a flat list of node, 's' | 'f', blob. A
-- node that already ended (its job ran twice: redelivered after it finished)
-- changes nothing, so each member counts once and each next step starts once.
-- `read`, when given, holds the members' v:<node> then n:<node> values, read
-- already (wfSettleRecord reads them with the record's head: one HMGET a batch).
local function wfSettle(ctx, members, read)
  local n = #members / 3
  local fresh, seen = {}, {}
  local i = 1
  while i <= n do
    local j = math.min(n, i + ACK_CHUNK / 2 - 1) -- the HSET below takes two values per member
    local done = read
    if not done then
      local names = {}
      for x = i, j do names[#names + 1] = 'v:' .. members[3 * x - 2] end
      done = redis.call('HMGET', ctx.wf, unpack(names))
    end
    local writes = {}
    for x = i, j do
      local node = members[3 * x - 2]
      if not done[x - i + 1] and not seen[node] then
        seen[node] = true
        fresh[#fresh + 1] = x
        writes[#writes + 1] = 'v:' .. node
        writes[#writes + 1] = members[3 * x - 1] .. members[3 * x]
      end
    end
    if #writes > 0 then redis.call('HSET', ctx.wf, unpack(writes)) end
    i = j + 1
  end
  if #fresh == 0 then return end
  if read then
    for _, x in ipairs(fresh) do
      local raw = read[n + x]
      if raw then ctx.cache[tonumber(members[3 * x - 2])] = wfParse(raw) end
    end
  else
    local nodes = {}
    for _, x in ipairs(fresh) do nodes[#nodes + 1] = 'n:' .. members[3 * x - 2] end
    for c = 1, #nodes, ACK_CHUNK do
      local raws = redis.call('HMGET', ctx.wf, unpack(nodes, c, math.min(#nodes, c + ACK_CHUNK - 1)))
      for y, raw in ipairs(raws) do
        if raw then ctx.cache[tonumber(members[3 * fresh[c + y - 1] - 2])] = wfParse(raw) end
      end
    end
  end
  for _, x in ipairs(fresh) do
    local node = tonumber(members[3 * x - 2])
    local known = ctx.cache[node]
    if known then
      if known.parent < 0 and node ~= 0 then ctx.opened = ctx.opened - 1 end
      wfEnd(ctx, node, members[3 * x - 1] == 's', members[3 * x])
    end
  end
  wfCount(ctx)
end

-- Writes the job index entries of the jobs started (one HSET per chunk), and the callbacks
-- started or ended to o; returns o when it changed.
local function wfFlush(ctx)
  local places = ctx.places
  for c = 1, #places, ACK_CHUNK do
    redis.call('HSET', ctx.jobs, unpack(places, c, math.min(#places, c + ACK_CHUNK - 1)))
  end
  ctx.places = {}
  if ctx.opened == 0 then return nil end
  local open = redis.call('HINCRBY', ctx.wf, 'o', ctx.opened)
  ctx.opened = 0
  return open
end

-- Settles members of one workflow (wfSettle) and indexes the jobs started, unless
-- its record is gone (expired: nothing left to continue). Returns the state the
-- workflow ended in (nil: it goes on, or is gone) and the client to tell ('' none).
local function wfSettleRecord(ctx, members)
  local n = #members / 3
  local names = { 'ttl', 'reply', 'state' }
  -- A batch's members usually fit in one HMGET with the head: their outcomes so far, then their nodes.
  local together = 3 + 2 * n <= ACK_CHUNK
  if together then
    for x = 1, n do names[3 + x] = 'v:' .. members[3 * x - 2] end
    for x = 1, n do names[3 + n + x] = 'n:' .. members[3 * x - 2] end
  end
  local head = redis.call('HMGET', ctx.wf, unpack(names))
  if not head[1] then return nil, '' end
  local read = nil
  if together then read = { unpack(head, 4) } end
  wfSettle(ctx, members, read)
  local open = wfFlush(ctx)
  -- The TTL runs from the end of the workflow and of every callback it started (o is 0), not before:
  -- a callback may wait longer than the TTL after the end, and its own callbacks need the record.
  -- Looked at only when this call ended the workflow or changed o after its end.
  if ctx.ended or (open and head[3] and head[3] ~= 'PENDING') then
    if not open then open = tonumber(redis.call('HGET', ctx.wf, 'o')) end
    if not open or open <= 0 then redis.call('PEXPIRE', ctx.wf, head[1]) end
  end
  return ctx.ended, head[2] or ''
end

-- A job's place in its workflow from its entry's meta (entry-codec.ts: key w, [id, node, queues]):
-- the workflow's id, the node, the queue names; nil for a job of no workflow, and for a place
-- entry-codec.ts workflowRef refuses (the same rule: a non-empty id, an integer node >= 0, a
-- non-empty list of queue names), whose job is malformed and belongs to no workflow.
local function wfRefOf(fields)
  local meta = getField(fields, 'meta')
  -- Most jobs belong to no workflow: no JSON decoded for them. The key w, quoted, then a colon (inside
  -- a JSON string its quotes would be escaped); [w] since the bare name is the consumer group's (GROUP).
  if type(meta) ~= 'string' or not string.find(meta, '"[w]":') then return nil end
  local ok, decoded = pcall(cjson.decode, meta)
  if not ok or type(decoded) ~= 'table' or type(decoded.w) ~= 'table' then return nil end
  local id, node, queues = decoded.w[1], decoded.w[2], decoded.w[3]
  if type(id) ~= 'string' or id == '' or type(node) ~= 'number' or type(queues) ~= 'table' then return nil end
  if node < 0 or node > MAX_INT or node ~= math.floor(node) or #queues == 0 then return nil end
  for i = 1, #queues do
    -- job-option-checks.ts isQueueName: letters, digits, "_", "-" or "."
    if type(queues[i]) ~= 'string' or not string.find(queues[i], '^[%w_.%-]+$') then return nil end
  end
  return id, node, queues
end

-- The workflows a caller named, for scripts that end members of any workflow they meet (a purge,
-- a recovery's burial): ARGV[countArg] of them, as pairs (id, m: its number of queues) from
-- ARGV[firstArg], and their keys from KEYS[firstKey], the workflow's record then 2 * m queue
-- keys (stream, delayed) each. Every key and argument must be used. Returns flows (id -> { key,
-- base: the index of its first queue key, members = {} }) and order (the ids as named).
local function wfNamed(script, firstKey, countArg, firstArg)
  local flows, order = {}, {}
  local k, a = firstKey, firstArg
  for _ = 1, intArg(countArg, 'number of workflows', 0) do
    if ARGV[a] == nil or ARGV[a] == '' then badArg(a, 'workflow id') end
    local m = intArg(a + 1, 'number of workflow queues', 1)
    flows[ARGV[a]] = { key = KEYS[k], base = k + 1, members = {} }
    order[#order + 1] = ARGV[a]
    k, a = k + 1 + 2 * m, a + 2
  end
  if k ~= #KEYS + 1 then error({ err = 'ERR prefork: ' .. script .. ': expected ' .. (k - 1) .. ' keys, got ' .. #KEYS }) end
  if a ~= #ARGV + 1 then badArg(a, 'unexpected argument: expected ' .. (a - 1) .. ' arguments, got ' .. #ARGV) end
  return flows, order
end

-- Records the failures gathered in wfNamed's flows (flow.members: node, 'f', failure, ...) in
-- their workflows, in the order named; appends to `out` the id, state and client to tell of
-- each workflow that ended.
local function wfSettleNamed(flows, order, jobs, clockFn, out)
  for _, wid in ipairs(order) do
    local flow = flows[wid]
    if #flow.members > 0 then
      local base = flow.base
      local ctx = wfContext(flow.key, jobs,
        function(q) return KEYS[base + 2 * q] end,
        function(q) return KEYS[base + 2 * q + 1] end,
        function(q) return queueOfKey(KEYS[base + 2 * q]) end,
        clockFn)
      local state, reply = wfSettleRecord(ctx, flow.members)
      if state then
        out[#out + 1] = wid
        out[#out + 1] = state
        out[#out + 1] = reply
      end
    end
  end
  return out
end

-- Notes in its workflow (one of wfNamed's flows) the failure of a member that left without a
-- node's settlement, shaped as the ones nodes record (consumer/outcome.ts): { id, name, error =
-- { name, message, code } }; wfSettleNamed records it. Nothing for a job of no workflow.
local function wfNoteFailure(flows, fields, name, message, code)
  local wid, wnode = wfRefOf(fields)
  if not wid then return end
  local members = flows[wid].members
  members[#members + 1] = string.format('%d', wnode)
  members[#members + 1] = 'f'
  members[#members + 1] = cmsgpack.pack({ id = jobIdOf(fields), name = getField(fields, 'task') or '',
    error = { name = name, message = message, code = code } })
end
