--[[
  Posts a control request to a live node: appended to its control list,
  stamped with its own deadline (now + `ttl`: a request not taken by then is
  dropped when the list is taken, though a later one keeps the list), and
  the node's lease deadline gets half a millisecond added, which its next
  heartbeat sees (so a node with nothing waiting never reads its list).
  The node's id is published on the wake channel: a node watching it takes
  the request at once.

  KEYS[1] {ns}:nodes        ZSET node id -> lease deadline (ms)
  KEYS[2] {ns}:ctl:<id>     LIST control requests for the node

  ARGV[1] node id
  ARGV[2] the request (a JSON object)
  ARGV[3] ttl (ms)
  ARGV[4] the wake channel

  Returns 1 posted, 0 no such live node.
]]
local nodes, ctl = KEYS[1], KEYS[2]
local id, request, ttl = ARGV[1], ARGV[2], intArg(3, 'ttl (ms)', 1)
local now = nowMs()
local score = redis.call('ZSCORE', nodes, id)
if not score or tonumber(score) < now then return 0 end
score = tonumber(score)
redis.call('RPUSH', ctl, stampControl(request, now + ttl))
-- The list lives as long as its longest-lived request; each one's own deadline drops it sooner.
if redis.call('PTTL', ctl) < ttl then redis.call('PEXPIRE', ctl, ttl) end
if score == math.floor(score) then redis.call('ZADD', nodes, 'XX', score + 0.5, id) end
redis.call('PUBLISH', ARGV[4], id)
return 1
