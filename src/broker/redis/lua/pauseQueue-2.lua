--[[
  Pauses a queue, on every node or on one (the member `<queue>` or
  `<queue> <node name>`, paused-queues.ts). A new pause flags every live
  lease (flagLeases): a node that never gets the pause request reads the
  pauses again at its next beat.

  KEYS[1] {ns}:paused   SET of pauses
  KEYS[2] {ns}:nodes    ZSET node id -> lease deadline (ms)

  ARGV[1] the member

  Returns 1 when it was not paused yet, else 0.
]]
local member = ARGV[1]
if member == nil or member == '' or string.sub(member, 1, 1) == ' ' then badArg(1, 'pause') end
local added = redis.call('SADD', KEYS[1], member)
if added == 1 then flagLeases(KEYS[2], nowMs()) end
return added
