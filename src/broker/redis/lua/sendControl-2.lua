--[[
  Posts a control request to a live node: appended to its control list
  (which expires after `ttl`: a request not taken by then is dropped), and
  the node's lease deadline gets half a millisecond added, which its next
  heartbeat sees (so a node with nothing waiting never reads its list).
  The node's id is published on the wake channel: a node watching it takes
  the request at once.

  KEYS[1] {ns}:nodes        ZSET node id -> lease deadline (ms)
  KEYS[2] {ns}:ctl:<id>     LIST control requests for the node

  ARGV[1] node id
  ARGV[2] the request (JSON)
  ARGV[3] ttl (ms)
  ARGV[4] the wake channel

  Returns 1 posted, 0 no such live node.
]]
local nodes, ctl = KEYS[1], KEYS[2]
local id, request, ttl = ARGV[1], ARGV[2], intArg(3, 'ttl (ms)', 1)
local score = redis.call('ZSCORE', nodes, id)
if not score or tonumber(score) < nowMs() then return 0 end
score = tonumber(score)
redis.call('RPUSH', ctl, request)
redis.call('PEXPIRE', ctl, ttl)
if score == math.floor(score) then redis.call('ZADD', nodes, 'XX', score + 0.5, id) end
redis.call('PUBLISH', ARGV[4], id)
return 1
