--[[
  Ends a recovery once the dead node holds nothing: deletes its consumer
  from every stream's group (DELCONSUMER discards pending entries, hence the
  check first), its claim and its info hash. The number of keys varies.

  KEYS[1]   {ns}:nodes
  KEYS[2]   {ns}:recovering
  KEYS[3]   {ns}:node:<id>
  KEYS[4..] every stream the node may have read: {ns}:q:<q> and {ns}:rd:<q>

  ARGV[1] the dead node's id

  Returns 1 done, 0 entries still pending (recover again), -1 no claim.
]]
local nodes, recovering, info = KEYS[1], KEYS[2], KEYS[3]
local node = ARGV[1]
if not redis.call('ZSCORE', recovering, node) then return -1 end
for i = 4, #KEYS do
  local p = redis.pcall('XPENDING', KEYS[i], GROUP, '-', '+', 1, node)
  if type(p) == 'table' and not p.err and #p > 0 then return 0 end
end
for i = 4, #KEYS do redis.pcall('XGROUP', 'DELCONSUMER', KEYS[i], GROUP, node) end
redis.call('ZREM', recovering, node)
redis.call('ZREM', nodes, node)
redis.call('DEL', info)
return 1
