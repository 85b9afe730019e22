--[[
  Stores schedule entries as a node starts: an entry whose stored definition
  differs (or that has none) gets this one, with the latest tick handled set
  to now, so it fires from its next tick on and no tick of the old
  definition counts as missed. An unchanged entry keeps its state. An entry
  with no state at all and a `since` (a node that ran it stores it again:
  Redis lost its data, or the leader dropped it) resumes from `since`, at
  most now: the tick the node was claiming when it found the state gone
  fires, and those missed follow the entry's misfire rule. A state that does
  not read (scheduleState: another program wrote the key) counts as none.

  KEYS[1]     {ns}:schedules       SET of entry names
  KEYS[2..]   {ns}:sched:<name>    HASH def, hash, last (and lastTick, lastRunAt, lastJob once it fired)

  ARGV        per entry (KEYS[i + 1]): name, hash, definition, since (ms, '' = none)

  Returns { now, { { hash, last }, ... } } (the state in force, by entry).
]]
local n = #KEYS - 1
if #ARGV ~= 4 * n then
  error({ err = 'ERR prefork: publishSchedule expects 4 arguments per entry key, got ' .. #ARGV .. ' for ' .. n })
end
for i = 1, n do
  if ARGV[4 * i] ~= '' then intArg(4 * i, 'since', 0) end
end
local now = nowMs()
local out = {}
for i = 1, n do
  local key, name, hash, def = KEYS[i + 1], ARGV[4 * i - 3], ARGV[4 * i - 2], ARGV[4 * i - 1]
  local cur, wrongType = scheduleState(key)
  if not cur or cur[1] ~= hash then
    local last = now
    if not cur and ARGV[4 * i] ~= '' then last = math.min(tonumber(ARGV[4 * i]), now) end
    local text = string.format('%d', last)
    if wrongType then redis.call('DEL', key) end
    redis.call('HSET', key, 'def', def, 'hash', hash, 'last', text)
    cur = { hash, text }
  end
  redis.call('SADD', KEYS[1], name)
  out[i] = { hash, cur[2] }
end
return { now, out }
