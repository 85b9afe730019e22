--[[
  Releases a unique lock when the job holding it ended (a later job may
  hold it already: then it stays). A job still in the job index has not
  ended: the settlement was one the fetch script did not apply (a fenced
  node's late ack of a job recovered meanwhile, whose other copy still
  runs or waits), and the key stays with that copy.

  KEYS[1] {ns}:unique:<key>
  KEYS[2] {ns}:jobs, the job index
  ARGV[1] the id of the job that ended

  Returns 1 when released, else 0.
]]
if ARGV[1] == nil or ARGV[1] == '' then badArg(1, 'job id') end
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 1 then return 0 end
redis.call('DEL', KEYS[1])
return 1
