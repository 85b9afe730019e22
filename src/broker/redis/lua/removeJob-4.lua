--[[
  Takes one job out of its queue or delayed set, if it still waits where the
  job index says (the caller located it first) and no node reserved it.

  KEYS[1] {ns}:q:<q>
  KEYS[2] {ns}:rd:<q>
  KEYS[3] {ns}:delayed:<q>
  KEYS[4] {ns}:jobs         the job index (see the prelude)

  ARGV[1] the job id
  ARGV[2] its place as located: 'q:<entry id>:<q>', 'r:<entry id>:<q>' or 'd:<due>:<q>'

  Returns 1 (removed), 0 (it moved: locate it again), -1 (a node reserved it).
]]
local jobs = KEYS[4]
local id, place = ARGV[1], ARGV[2]
if id == nil or id == '' then badArg(1, 'job id') end
local kind, ref = string.match(place or '', '^([qrd]):([^:]+):')
if not kind then badArg(2, 'place') end
if redis.call('HGET', jobs, id) ~= place then return 0 end
if kind == 'd' then
  for _, member in ipairs(redis.call('ZRANGE', KEYS[3], ref, ref, 'BYSCORE')) do
    if jobIdOf(cmsgpack.unpack(member)) == id then
      redis.call('ZREM', KEYS[3], member)
      redis.call('HDEL', jobs, id)
      return 1
    end
  end
  return 0
end
local stream = KEYS[1]
if kind == 'r' then stream = KEYS[2] end
local pending = redis.pcall('XPENDING', stream, GROUP, ref, ref, 1)
if type(pending) == 'table' and not pending.err and #pending > 0 then return -1 end
if redis.call('XDEL', stream, ref) == 0 then return 0 end
redis.call('HDEL', jobs, id)
return 1
