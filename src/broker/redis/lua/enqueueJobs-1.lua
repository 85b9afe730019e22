--[[
  Bulk enqueue: adds many ready jobs to one queue's stream in one call (one
  EVALSHA with one packed argument, instead of one XADD command per job, or
  twelve arguments per job, each costly to encode in the client). The
  entries are exactly what a plain XADD per job would add, in the same order.

  KEYS[1] {ns}:q:<queue>   the queue's stream

  ARGV[1] msgpack array of jobs, each an array of the six canonical values
          { id, task, payload, attempt, redeliveries, meta } (all strings)

  Returns the number of jobs added.
]]
local stream = KEYS[1]
local jobs = cmsgpack.unpack(ARGV[1])
for _, v in ipairs(jobs) do
  redis.call('XADD', stream, '*', 'id', v[1], 'task', v[2], 'payload', v[3], 'attempt', v[4], 'redeliveries', v[5], 'meta', v[6])
end
return #jobs
