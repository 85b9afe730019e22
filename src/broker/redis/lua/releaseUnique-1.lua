--[[
  Releases a unique lock when the job holding it ended (a later job may
  hold it already: then it stays).

  KEYS[1] {ns}:unique:<key>
  ARGV[1] the id of the job that ended

  Returns 1 when released, else 0.
]]
if ARGV[1] == nil or ARGV[1] == '' then badArg(1, 'job id') end
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1
