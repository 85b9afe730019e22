--[[
  The leader's schedule housekeeping in one step: forgets the stored entries
  that no live node registered, only while the caller still holds the leader
  lease it names. Both are read here, on the server's clock: a leader whose
  replies stalled past its lease would otherwise find no live node (its own
  lease lapsed too) and drop the entries every node runs, which are then
  stored again from now and lose the ticks missed meanwhile.

  KEYS[1]   {ns}:schedules   SET of entry names
  KEYS[2]   {ns}:nodes       ZSET node id -> lease deadline
  KEYS[3]   {ns}:leader      HASH node, token, until

  ARGV[1]   the leader's node id
  ARGV[2]   its fencing token
  ARGV[3]   the prefix of a node's description key ({ns}:node:)
  ARGV[4]   the prefix of an entry's key ({ns}:sched:)

  Returns the names dropped (none when the lease is not the caller's any more).
]]
local id, token = ARGV[1], intArg(2, 'fencing token', 0)
local nodePrefix, entryPrefix = ARGV[3], ARGV[4]
if not id or not nodePrefix or not entryPrefix then badArg(#ARGV, 'arguments: 4 expected') end
local now = nowMs()
local cur = redis.call('HMGET', KEYS[3], 'node', 'token', 'until')
if cur[1] ~= id or tonumber(cur[2]) ~= token or (tonumber(cur[3]) or 0) < now then return {} end
local stored = redis.call('SMEMBERS', KEYS[1])
if #stored == 0 then return {} end
local used = {}
for _, node in ipairs(redis.call('ZRANGE', KEYS[2], string.format('%d', now), '+inf', 'BYSCORE')) do
  local raw = redis.call('HGET', nodePrefix .. node, 'schedule')
  if raw then
    local ok, names = pcall(cjson.decode, raw)
    if ok and type(names) == 'table' then
      for _, name in ipairs(names) do
        if type(name) == 'string' then used[name] = true end
      end
    end
  end
end
local dropped = {}
for _, name in ipairs(stored) do
  if not used[name] then
    dropped[#dropped + 1] = name
    redis.call('DEL', entryPrefix .. name)
    redis.call('SREM', KEYS[1], name)
  end
end
return dropped
