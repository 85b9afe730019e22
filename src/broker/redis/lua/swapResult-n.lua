--[[
  Writes a job's result only if the stored one is still what the caller
  read (a compare-and-set: a job that finished meanwhile keeps its result),
  and in the same step announces it on the given reply lists: a client
  waiting for the job (a revoke that took it out of its queue) or for the
  workflow that ended with it. An announcement sent after the write could
  be lost with the connection, leaving its waiter without an answer. The
  number of keys varies.

  KEYS[1]   <ns>:res:<id>
  KEYS[2..] <ns>:reply:<client>, the reply lists to announce on (none or more)

  ARGV[1] '1' when the caller read a result, '0' when it read none
  ARGV[2] the result it read ('' when none)
  ARGV[3] the new result
  ARGV[4] ttl (ms)
  ARGV[5] with reply lists: their ttl (ms)
  ARGV[6] with reply lists: the most entries a list keeps (trimmed to it)
  ARGV[7..] with reply lists: the id announced on each, in KEYS order

  Returns 1 written (and announced; a reply list that holds another type is
  skipped: another program wrote it), 0 changed meanwhile (read it again).
]]
local res = KEYS[1]
local had = oneOfArg(1, 'had a result', { '0', '1' }) == '1'
local ttl = intArg(4, 'ttl (ms)', 1)
local lists = #KEYS - 1
local replyTtl, replyMax = 0, 0
if lists > 0 then
  replyTtl = intArg(5, 'reply list ttl (ms)', 1)
  replyMax = intArg(6, 'reply list length', 1)
  if #ARGV ~= 6 + lists then badArg(7, 'one id per reply list') end
end
local current = redis.call('GET', res)
if had then
  if current ~= ARGV[2] then return 0 end
elseif current then
  return 0
end
redis.call('SET', res, ARGV[3], 'PX', ttl)
for i = 1, lists do
  local list = KEYS[1 + i]
  local pushed = redis.pcall('LPUSH', list, ARGV[6 + i])
  if type(pushed) == 'number' then
    redis.call('LTRIM', list, 0, replyMax - 1)
    redis.call('PEXPIRE', list, replyTtl)
  end
end
return 1
