--[[
  One page of a queue's delayed jobs (read only), by due time: those due at
  or after ARGV[1], skipping the first ARGV[2] of them (the ones a previous
  page showed with that same due time). O(log n + skip + limit).

  KEYS[1] {ns}:delayed:<q>

  ARGV[1] lowest due time (epoch ms)
  ARGV[2] how many to skip
  ARGV[3] most jobs to return

  Returns { due, fields, due, fields, ... } (each member unpacked to its entry fields).
]]
local min = intArg(1, 'lowest due time', -MAX_INT)
local skip = intArg(2, 'skip', 0)
local limit = intArg(3, 'limit', 1)
local out = {}
local r = redis.call('ZRANGE', KEYS[1], min, '+inf', 'BYSCORE', 'LIMIT', skip, limit, 'WITHSCORES')
for i = 1, #r, 2 do
  out[#out + 1] = r[i + 1]
  out[#out + 1] = cmsgpack.unpack(r[i])
end
return out
