--[[
  Sets a task's rate at run time for every node, and spaces again the jobs
  already waiting for the limit (delayed with a `slot` mark, see
  fetchJobs-n.lua): in the order of their due times, from now, one every
  interval (off: all due now), each then holding that turn. The bucket
  restarts after them. Their places in the job index move with them. A
  rate stored or dropped flags every live lease (flagLeases): a node that
  never gets the rate-limit request reads the rates again at its next beat.

  KEYS[1]          {ns}:rate-limits       HASH task -> "<interval ms> <rate>"
  KEYS[2]          {ns}:rate:<task>       the task's bucket (TAT)
  KEYS[3]          {ns}:jobs              the job index (see the prelude)
  KEYS[4]          {ns}:nodes             ZSET node id -> lease deadline (ms)
  KEYS[2j+3]       {ns}:delayed:<queue j> the delayed set of every known queue
  KEYS[2j+4]       {ns}:q:<queue j>       its stream (a timer marker wakes blocked nodes)

  ARGV[1] task, ARGV[2] interval (ms; '0' = off), ARGV[3] the rate as shown ("100/s", "off");
  or ARGV[2] '' and ARGV[3] 'default': the rate set at run time goes (the queue keys are not
  read), the jobs waiting keep the turns they hold

  Returns how many waiting jobs were spaced again. Reads every member of
  the delayed sets: an operator's command, not a hot path.
]]
local limits, bucket, jobs, nodes = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local task, rate = ARGV[1], ARGV[3]
if task == nil or task == '' then badArg(1, 'task name') end
if #KEYS < 4 or (#KEYS - 4) % 2 ~= 0 then
  badArg(0, 'keys: expected the job index and the nodes, then a delayed set and a stream per queue')
end
if ARGV[2] == '' and rate == 'default' then
  if redis.call('HDEL', limits, task) == 1 then flagLeases(nodes, nowMs()) end
  return 0
end
local interval = tonumber(ARGV[2])
if not interval or interval ~= interval or interval < 0 or interval > MAX_INT then
  badArg(2, 'interval (ms): expected a number >= 0')
end
if rate == nil or rate == '' then badArg(3, 'rate') end

redis.call('HSET', limits, task, ARGV[2] .. ' ' .. rate)
local now = nowMs()
flagLeases(nodes, now)
local waiting = {}
for j = 5, #KEYS, 2 do
  local members = redis.call('ZRANGE', KEYS[j], 0, -1, 'WITHSCORES')
  for k = 1, #members, 2 do
    local fields = cmsgpack.unpack(members[k])
    if getField(fields, 'task') == task and getField(fields, 'slot') then
      waiting[#waiting + 1] = { tonumber(members[k + 1]), members[k], fields, KEYS[j], KEYS[j + 1] }
    end
  end
end
table.sort(waiting, function(a, b) return a[1] < b[1] end)
for i, w in ipairs(waiting) do
  local due = now
  if interval > 0 then due = math.ceil(now + (i - 1) * interval) end
  local turn = string.format('%d', due)
  redis.call('ZREM', w[4], w[2])
  setField(w[3], 'slot', turn)
  schedule(w[4], w[5], w[3], due)
  indexJob(jobs, w[3], 'd', turn, queueOfKey(w[4]))
end
if interval > 0 then
  local last = now + #waiting * interval
  redis.call('SET', bucket, string.format('%.3f', last), 'PX', math.ceil(last - now) + 1000)
else
  redis.call('DEL', bucket)
end
return #waiting
