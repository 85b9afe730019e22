--[[
  Claims the recovery of a node whose lease expired (or whose recoverer's
  claim expired): the node leaves the nodes ZSET and enters the recovering
  ZSET under the recoverer's deadline, so a recoverer that dies is retried.

  KEYS[1] {ns}:nodes        ZSET node id -> lease deadline (ms)
  KEYS[2] {ns}:recovering   ZSET dead node id -> recoverer's deadline (ms)

  ARGV[1] the dead node's id
  ARGV[2] how long the claim holds (ms)
  ARGV[3] '1' to claim even a live lease (a node unregistering itself)

  Returns 1 claimed, 0 the node is alive or another recoverer holds it,
  -1 nothing to recover (unknown node, or already recovered).
]]
local nodes, recovering = KEYS[1], KEYS[2]
local dead, hold = ARGV[1], intArg(2, 'claim hold (ms)', 1)
local force = oneOfArg(3, 'force flag', { '0', '1' }) == '1'
local now = nowMs()
local lease = redis.call('ZSCORE', nodes, dead)
if lease then
  if tonumber(lease) >= now and not force then return 0 end
  redis.call('ZREM', nodes, dead)
else
  local claim = redis.call('ZSCORE', recovering, dead)
  if not claim then return -1 end
  if tonumber(claim) >= now and not force then return 0 end
end
redis.call('ZADD', recovering, now + hold, dead)
return 1
