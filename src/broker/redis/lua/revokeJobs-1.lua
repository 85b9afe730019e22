--[[
  Remembers revoked job ids: each added (or refreshed) at the server's time,
  then those older than the ttl and the oldest past `max` dropped.

  KEYS[1] {ns}:revoked   ZSET job id -> epoch ms it was revoked

  ARGV[1] ttl (ms)
  ARGV[2] most ids kept
  ARGV[3..] job ids

  Returns { the server's time (ms): the ids are remembered until it + ttl,
  one character per id, '1' when it was remembered already (revoked before
  within the ttl), else '0' }.
]]
local revoked = KEYS[1]
local ttl, most = intArg(1, 'ttl (ms)', 1), intArg(2, 'most ids kept', 1)
if #ARGV < 3 then badArg(3, 'job id') end
local now = nowMs()
local before = {}
for i = 3, #ARGV do
  local at = redis.call('ZSCORE', revoked, ARGV[i])
  before[#before + 1] = (at and tonumber(at) > now - ttl) and '1' or '0'
  redis.call('ZADD', revoked, now, ARGV[i])
end
redis.call('ZREMRANGEBYSCORE', revoked, '-inf', '(' .. string.format('%d', now - ttl))
redis.call('ZREMRANGEBYRANK', revoked, 0, -(most + 1))
return { now, table.concat(before) }
