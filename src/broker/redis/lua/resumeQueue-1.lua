--[[
  Lifts the pauses of a queue: with a node name, its pause on that node
  only; without, every pause of the queue (on every node, and on single
  nodes). Members are `<queue>` or `<queue> <node name>` (paused-queues.ts).

  KEYS[1] {ns}:paused   SET of pauses

  ARGV[1] queue
  ARGV[2] node name, or '' for every node

  Returns how many pauses were lifted.
]]
local paused = KEYS[1]
local queue, node = ARGV[1], ARGV[2]
if queue == nil or queue == '' or string.find(queue, ' ', 1, true) then badArg(1, 'queue name') end
if node == nil then badArg(2, "node name or ''") end
if node ~= '' then return redis.call('SREM', paused, queue .. ' ' .. node) end
local gone = {}
for _, member in ipairs(redis.call('SMEMBERS', paused)) do
  if member == queue or string.sub(member, 1, #queue + 1) == queue .. ' ' then gone[#gone + 1] = member end
end
if #gone == 0 then return 0 end
return redis.call('SREM', paused, unpack(gone))
