--[[
  Bulk enqueue: adds many ready jobs to one queue's stream in one call (one
  EVALSHA with one packed argument, instead of one XADD command per job, or
  twelve arguments per job, each costly to encode in the client). The
  entries are exactly what a plain XADD per job would add, in the same order.

  KEYS[1] {ns}:q:<queue>   the queue's stream
  KEYS[2] {ns}:jobs        the job index (see the prelude)

  ARGV[1] msgpack array of jobs, each an array of the six canonical values
          { id, task, payload, attempt, redeliveries, meta } (all strings)

  Returns the number of jobs added.
]]
local stream, jobs = KEYS[1], KEYS[2]
local queue = queueOfKey(stream)
local ok, rows = pcall(cmsgpack.unpack, ARGV[1] or '')
if not ok or type(rows) ~= 'table' then badArg(1, 'packed jobs: not a msgpack array') end
-- All checked before the first XADD: a bad row must not leave half the batch enqueued.
for i, v in ipairs(rows) do
  if type(v) ~= 'table' or #v ~= 6 then badArg(1, 'packed jobs: row ' .. i .. ' is not six values') end
  for k = 1, 6 do
    if type(v[k]) ~= 'string' then badArg(1, 'packed jobs: row ' .. i .. ' value ' .. k .. ' is not a string') end
  end
end
checkIndex(jobs)
local places = {}
for _, v in ipairs(rows) do
  addJob(stream, queue, jobs, places, v[1], v[2], v[3], v[4], v[5], v[6])
end
if #places > 0 then redis.call('HSET', jobs, unpack(places)) end
return #rows
