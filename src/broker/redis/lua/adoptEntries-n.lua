#!lua flags=allow-oom
--[[
  A node fenced while its lease still ran by its own clock (Redis lost its
  data, or its clock jumped) keeps and runs the jobs it holds, under a new
  id. Whatever it read under the old id since is moved to the new one
  (XCLAIM JUSTID: the delivery count stays), so the new lease covers it:
  otherwise only the orphan sweep (heartbeat-n.lua) would find it, and
  would hand out again a job still running here. The old id leaves the
  nodes set, with its description and its consumers. The number of keys varies.

  KEYS[1]   {ns}:nodes          ZSET node id -> lease deadline (ms)
  KEYS[2]   {ns}:node:<old id>  HASH the old id's description
  KEYS[3..] the streams the node reads: {ns}:q:<q> and {ns}:rd:<q>

  ARGV[1] the old id
  ARGV[2] the new id (registered already)

  Returns how many entries moved; -1 when the old id holds a live lease
  (a registration that is not this node's to take over: nothing changes).

  allow-oom: it moves entries between consumers, growing nothing, and runs
  when Redis may be at maxmemory.
]]
local nodes, info = KEYS[1], KEYS[2]
local from, to = ARGV[1], ARGV[2]
if from == nil or from == '' then badArg(1, 'old node id') end
if to == nil or to == '' or to == from then badArg(2, 'new node id, other than the old') end
local lease = redis.call('ZSCORE', nodes, from)
if lease and tonumber(lease) >= nowMs() then return -1 end
-- Page size: XCLAIM takes the ids as arguments (Lua's C stack holds ~8000).
local PAGE = 1000
local moved = 0
for i = 3, #KEYS do
  for _ = 1, 1000 do
    local pending = redis.pcall('XPENDING', KEYS[i], GROUP, '-', '+', PAGE, from)
    if type(pending) ~= 'table' or pending.err or #pending == 0 then break end
    local claim = { 'XCLAIM', KEYS[i], GROUP, to, 0 }
    for _, e in ipairs(pending) do claim[#claim + 1] = e[1] end
    claim[#claim + 1] = 'JUSTID'
    redis.call(unpack(claim))
    moved = moved + #pending
    if #pending < PAGE then break end
  end
  redis.pcall('XGROUP', 'DELCONSUMER', KEYS[i], GROUP, from)
end
redis.call('ZREM', nodes, from)
redis.call('DEL', info)
return moved
