--[[
  Writes a job's result only if the stored one is still what the caller
  read (a compare-and-set: a job that finished meanwhile keeps its result).

  KEYS[1] <ns>:res:<id>

  ARGV[1] '1' when the caller read a result, '0' when it read none
  ARGV[2] the result it read ('' when none)
  ARGV[3] the new result
  ARGV[4] ttl (ms)

  Returns 1 written, 0 changed meanwhile (read it again).
]]
local res = KEYS[1]
local had = oneOfArg(1, 'had a result', { '0', '1' }) == '1'
local ttl = intArg(4, 'ttl (ms)', 1)
local current = redis.call('GET', res)
if had then
  if current ~= ARGV[2] then return 0 end
elseif current then
  return 0
end
redis.call('SET', res, ARGV[3], 'PX', ttl)
return 1
