--[[
  Enqueues a whole workflow, all or nothing: its record (see lib/workflow.lua)
  and the jobs of its first steps, in one call however many members.

  KEYS[1]        {ns}:wf:<id>     the workflow's record
  KEYS[2]        {ns}:jobs        the job index (see the prelude)
  KEYS[2q+3]     {ns}:q:<queue q>        for each queue of the workflow (q from 0)
  KEYS[2q+4]     {ns}:delayed:<queue q>

  ARGV[1] the workflow's id
  ARGV[2] the client to tell when it ends ('' = none)
  ARGV[3] its TTL (ms): the record expires this long after the workflow ended (never while pending)
  ARGV[4] N, the number of nodes
  ARGV[5 .. 4+N] node i's description (lib/workflow.lua, n:<i>)
  then, for each job node in node order, its entry fields (cmsgpack array)

  Returns 1, or 0 when the record exists already (a call sent again after
  its reply was lost: nothing is changed, the workflow is not started twice).
]]
local wf, jobs = KEYS[1], KEYS[2]
checkIndex(jobs)
if #KEYS < 4 or #KEYS % 2 ~= 0 then error({ err = 'ERR prefork: enqueueWorkflow: expected 2 + 2 per queue keys' }) end
local nq = (#KEYS - 2) / 2
if ARGV[1] == nil or ARGV[1] == '' then badArg(1, 'workflow id') end
if ARGV[2] == nil then badArg(2, 'reply client') end
intArg(3, 'ttl (ms)', 1)
local n = intArg(4, 'number of nodes', 1)

-- Every argument checked before the first write.
local ctx = wfContext(wf, jobs,
  function(q) return KEYS[3 + 2 * q] end,
  function(q) return KEYS[4 + 2 * q] end,
  function(q) return queueOfKey(KEYS[3 + 2 * q]) end,
  nowMs)
local record = { 'id', ARGV[1], 'reply', ARGV[2], 'ttl', ARGV[3], 'state', 'PENDING' }
local b = 5 + n
for i = 0, n - 1 do
  local raw = ARGV[5 + i]
  if raw == nil or not string.find(raw, '^[LCDG]') then badArg(5 + i, 'node description') end
  local node = wfParse(raw)
  if node.onError == nil then badArg(5 + i, 'node description: expected a kind and 10 integers') end
  ctx.cache[i] = node
  record[#record + 1] = 'n:' .. i
  record[#record + 1] = raw
  if node.kind == 'L' then
    if node.queue < 0 or node.queue >= nq then badArg(5 + i, 'node description: queue index') end
    local ok, fields = pcall(cmsgpack.unpack, ARGV[b] or '')
    if not ok or type(fields) ~= 'table' or #fields ~= 12 or fields[1] ~= 'id' or fields[5] ~= 'payload'
      or fields[11] ~= 'meta' or string.sub(fields[12], 1, 1) ~= '{' then
      badArg(b, 'job entry fields')
    end
    ctx.bodies[i] = ARGV[b]
    ctx.unpacked[i] = fields
    record[#record + 1] = 'j:' .. i
    record[#record + 1] = ARGV[b]
    b = b + 1
  end
end
if b ~= #ARGV + 1 then badArg(b, 'unexpected argument: expected ' .. (b - 1) .. ' arguments, got ' .. #ARGV) end
-- Enqueued already: this is the same call sent again (its reply was lost with the connection).
if redis.call('EXISTS', wf) == 1 then return 0 end

-- ACK_CHUNK values (an even number: whole field/value pairs) per HSET: unpack's limit.
for c = 1, #record, ACK_CHUNK do
  redis.call('HSET', wf, unpack(record, c, math.min(#record, c + ACK_CHUNK - 1)))
end
wfStart(ctx, 0, nil)
wfFlush(ctx)
return 1
