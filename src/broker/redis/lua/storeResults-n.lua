--[[
  Stores a settle batch's results, in order (a STARTED record before the
  same job's final one): one call instead of a SET per job, so the node
  builds one command per batch, not one per result.

  KEYS[i]        <ns>:res:<id> of the i-th result

  ARGV[2i - 1]   its ttl (ms)
  ARGV[2i]       its record (msgpack)

  Returns how many were stored.
]]
if #ARGV ~= 2 * #KEYS then
  error({ err = 'ERR prefork: storeResults takes a ttl and a record per key: ' .. #KEYS .. ' keys, ' .. #ARGV .. ' args' })
end
local ttls = {}
for i = 1, #KEYS do
  ttls[i] = intArg(2 * i - 1, 'ttl (ms)', 1)
end
for i = 1, #KEYS do
  redis.call('SET', KEYS[i], ARGV[2 * i], 'PX', ttls[i])
end
return #KEYS
