#!lua flags=allow-oom
--[[
  Takes starts from rate-limit buckets (GCRA): per task, the bucket keeps
  the theoretical arrival time (TAT) of the next start; `count` starts are
  handed out at max(now, TAT), then every `interval` ms after, and TAT moves
  past the last one. No window of any length W holds more than W / interval + 1
  starts, whichever node asks. A rate set at run time (the hash, see
  setRateLimit-n.lua) wins over the interval the node sent.

  KEYS[1]      {ns}:rate-limits     HASH task -> "<interval ms> <rate>" (interval 0: off)
  KEYS[1 + i]  {ns}:rate:<task i>   STRING the bucket's TAT (ms, on this server's clock)

  ARGV[3i-2] task i, ARGV[3i-1] its interval (ms, > 0), ARGV[3i] how many starts

  Returns one { first delay (ms from now), interval (ms; '0': no limit),
  rate set at run time or '' } per task, as strings (fractions of a ms kept).

  allow-oom: it writes one short string per task. Refused when Redis is at
  maxmemory, a limited job would never start (it would ask again every
  second), and its start is what frees memory (its ack deletes it).
]]
local limits = KEYS[1]
local n = #KEYS - 1
if #ARGV ~= 3 * n then badArg(#ARGV, 'number of arguments: expected 3 per bucket key, ' .. (3 * n)) end
for i = 1, n do
  if ARGV[3 * i - 2] == nil or ARGV[3 * i - 2] == '' then badArg(3 * i - 2, 'task name') end
  local interval = tonumber(ARGV[3 * i - 1])
  if not interval or interval ~= interval or interval <= 0 or interval > MAX_INT then
    badArg(3 * i - 1, 'interval (ms): expected a number > 0')
  end
  intArg(3 * i, 'count', 1)
end

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local out = {}
for i = 1, n do
  local task, interval, count = ARGV[3 * i - 2], tonumber(ARGV[3 * i - 1]), tonumber(ARGV[3 * i])
  local override = ''
  local set = redis.call('HGET', limits, task)
  if set then
    local ms, rate = string.match(set, '^(%S+) (.*)$')
    if ms and tonumber(ms) then
      interval = tonumber(ms)
      override = rate
    end
  end
  if interval <= 0 then
    out[i] = { '0', '0', override }
  else
    local bucket = KEYS[1 + i]
    local tat = tonumber(redis.call('GET', bucket)) or 0
    local first = math.max(now, tat)
    local last = first + count * interval
    redis.call('SET', bucket, string.format('%.3f', last), 'PX', math.ceil(last - now) + 1000)
    out[i] = { string.format('%.3f', first - now), string.format('%.6f', interval), override }
  end
end
return out
