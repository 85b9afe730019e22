--[[
  Writes a job's REVOKED result only if the stored one is still what the
  caller read (a compare-and-set: a job that finished meanwhile keeps its
  result). For a job a node holds (the node announces it when it settles)
  or one in no queue; a job taken out of its queue gets its result, and its
  client's announcement, in the step that takes it out (removeJob-n.lua).

  KEYS[1] <ns>:res:<id>

  ARGV[1] '1' when the caller read a result, '0' when it read none
  ARGV[2] the result it read ('' when none)
  ARGV[3] the new result
  ARGV[4] ttl (ms)

  Returns 1 written, 0 changed meanwhile (read it again).
]]
if #KEYS ~= 1 then error({ err = 'ERR prefork: swapResult: expected 1 key' }) end
local res = KEYS[1]
local had = oneOfArg(1, 'had a result', { '0', '1' }) == '1'
if ARGV[2] == nil then badArg(2, 'result read') end
if ARGV[3] == nil or ARGV[3] == '' then badArg(3, 'new result') end
local ttl = intArg(4, 'ttl (ms)', 1)
local current = redis.call('GET', res)
if had then
  if current ~= ARGV[2] then return 0 end
elseif current then
  return 0
end
redis.call('SET', res, ARGV[3], 'PX', ttl)
return 1
