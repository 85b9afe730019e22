--[[
  Stores schedule entries as a node starts: an entry whose stored definition
  differs (or that has none) gets this one, with the latest tick handled set
  to now, so it fires from its next tick on and no tick of the old
  definition counts as missed. An unchanged entry keeps its state.

  KEYS[1]     {ns}:schedules       SET of entry names
  KEYS[2..]   {ns}:sched:<name>    HASH def, hash, last (and lastTick, lastRunAt, lastJob once it fired)

  ARGV        per entry (KEYS[i + 1]): name, hash, definition

  Returns { now, { { hash, last }, ... } } (the state in force, by entry).
]]
local n = #KEYS - 1
if #ARGV ~= 3 * n then
  error({ err = 'ERR prefork: publishSchedule expects 3 arguments per entry key, got ' .. #ARGV .. ' for ' .. n })
end
local now = nowMs()
local out = {}
for i = 1, n do
  local key, name, hash, def = KEYS[i + 1], ARGV[3 * i - 2], ARGV[3 * i - 1], ARGV[3 * i]
  local cur = redis.call('HMGET', key, 'hash', 'last')
  if cur[1] ~= hash or not cur[2] then
    redis.call('HSET', key, 'def', def, 'hash', hash, 'last', string.format('%d', now))
    cur = { hash, string.format('%d', now) }
  end
  redis.call('SADD', KEYS[1], name)
  out[i] = { hash, cur[2] }
end
return { now, out }
