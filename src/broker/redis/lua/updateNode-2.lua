--[[
  Changes fields of a live node's description (its concurrency after a
  grow, shrink or autoscale), so listings show the node as it is now. A node
  whose lease is gone (being recovered, or left) is not written back: its
  hash would outlive it.

  KEYS[1] {ns}:nodes        ZSET node id -> lease deadline (ms)
  KEYS[2] {ns}:node:<id>    HASH node info

  ARGV[1] node id
  ARGV[2 ..] field/value pairs

  Returns 1 if the description was changed, 0 if the node is not live.
]]
local nodes, info = KEYS[1], KEYS[2]
local id = ARGV[1]
if (#ARGV - 1) % 2 ~= 0 then badArg(#ARGV, 'field/value pairs: expected an even count') end
local deadline = redis.call('ZSCORE', nodes, id)
if not deadline or tonumber(deadline) < nowMs() or redis.call('EXISTS', info) == 0 then return 0 end
local pairs_ = {}
for i = 2, #ARGV do pairs_[#pairs_ + 1] = ARGV[i] end
if #pairs_ > 0 then redis.call('HSET', info, unpack(pairs_)) end
return 1
