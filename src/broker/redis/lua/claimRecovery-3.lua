--[[
  Claims the recovery of a node whose lease expired (or whose recoverer's
  claim expired): the node leaves the nodes ZSET and enters the recovering
  ZSET under the recoverer's deadline, so a recoverer that dies is retried.
  A node that leaves (or is taken for dead) leads nothing: if it held the
  leader lease, the lease is released (its fencing token kept, so the next
  holder's is higher) and the nodes are woken on the control channel with
  an empty id, so one that stands for leader beats and takes it at once.

  KEYS[1] {ns}:nodes        ZSET node id -> lease deadline (ms)
  KEYS[2] {ns}:recovering   ZSET dead node id -> recoverer's deadline (ms)
  KEYS[3] {ns}:leader       HASH node, token, until: the leader lease (heartbeat-n.lua)

  ARGV[1] the dead node's id
  ARGV[2] how long the claim holds (ms)
  ARGV[3] '1' to claim even a live lease (a node unregistering itself)
  ARGV[4] the control wake-up channel (a channel, not a key)

  Returns 1 claimed, 0 the node is alive or another recoverer holds it,
  -1 nothing to recover (unknown node, or already recovered).
]]
local nodes, recovering, leader = KEYS[1], KEYS[2], KEYS[3]
local dead, hold = ARGV[1], intArg(2, 'claim hold (ms)', 1)
local force = oneOfArg(3, 'force flag', { '0', '1' }) == '1'
local wake = ARGV[4]
if wake == nil or wake == '' then badArg(4, 'wake-up channel') end
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
if redis.call('HGET', leader, 'node') == dead then
  redis.call('HDEL', leader, 'node', 'until')
  redis.call('PUBLISH', wake, '')
end
return 1
