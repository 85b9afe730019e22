--[[
  Bulk enqueue: adds many ready jobs to one queue's stream in one call (one
  EVALSHA instead of one XADD command per job on the client). The entries are
  exactly what a plain XADD per job would add, in the same order.

  KEYS[1] {ns}:q:<queue>   the queue's stream

  ARGV[1] F, number of arguments per job (field/value pairs: 12)
  ARGV[2 ..] the jobs' field/value pairs, F per job

  Returns the number of jobs added.
]]
local stream = KEYS[1]
local f = tonumber(ARGV[1])
local n = 0
for i = 2, #ARGV, f do
  redis.call('XADD', stream, '*', unpack(ARGV, i, i + f - 1))
  n = n + 1
end
return n
