--[[
  Lifts the pauses of a queue: with a node name, its pause on that node
  only; without, every pause of the queue (on every node, and on single
  nodes). Members are `<queue>` or `<queue> <node name>` (paused-queues.ts).
  A pause lifted flags every live lease (flagLeases): a node that never gets
  the resume request reads the pauses again at its next beat.

  KEYS[1] {ns}:paused   SET of pauses
  KEYS[2] {ns}:nodes    ZSET node id -> lease deadline (ms)

  ARGV[1] queue
  ARGV[2] node name, or '' for every node

  Returns how many pauses were lifted.
]]
local paused, nodes = KEYS[1], KEYS[2]
local queue, node = ARGV[1], ARGV[2]
if queue == nil or queue == '' or string.find(queue, ' ', 1, true) then badArg(1, 'queue name') end
if node == nil then badArg(2, "node name or ''") end
local lifted
if node ~= '' then
  lifted = redis.call('SREM', paused, queue .. ' ' .. node)
else
  local gone = {}
  for _, member in ipairs(redis.call('SMEMBERS', paused)) do
    if member == queue or string.sub(member, 1, #queue + 1) == queue .. ' ' then gone[#gone + 1] = member end
  end
  lifted = #gone == 0 and 0 or redis.call('SREM', paused, unpack(gone))
end
if lifted > 0 then flagLeases(nodes, nowMs()) end
return lifted
