#!lua flags=allow-oom
--[[
  Registers a node: a lease in the nodes ZSET (deadline from the server's
  clock), its description in a hash (deleted when the node is recovered or
  leaves; listings skip nodes whose lease expired), its queues in the set of
  known queues (recovery scans those).

  KEYS[1] {ns}:nodes        ZSET node id -> lease deadline (ms)
  KEYS[2] {ns}:node:<id>    HASH node info
  KEYS[3] {ns}:queues       SET of known queue names

  ARGV[1] node id
  ARGV[2] lease (ms)
  ARGV[3] F, number of info field/value pairs
  ARGV[4 .. 4+2F-1] info field/value pairs
  ARGV[4+2F ..] the node's queue names

  Returns the lease deadline (ms).

  allow-oom: a node registers (or re-registers after a fencing) even when
  Redis is at maxmemory; it adds a few hundred bytes, once.
]]
local nodes, info, queues = KEYS[1], KEYS[2], KEYS[3]
local id, lease, f = ARGV[1], intArg(2, 'lease (ms)', 1), intArg(3, 'number of info pairs', 0, math.floor((#ARGV - 3) / 2))
local deadline = nowMs() + lease
redis.call('ZADD', nodes, deadline, id)
redis.call('DEL', info)
local pairs_ = {}
for i = 4, 3 + 2 * f do pairs_[#pairs_ + 1] = ARGV[i] end
if #pairs_ > 0 then redis.call('HSET', info, unpack(pairs_)) end
for i = 4 + 2 * f, #ARGV do redis.call('SADD', queues, ARGV[i]) end
return deadline
