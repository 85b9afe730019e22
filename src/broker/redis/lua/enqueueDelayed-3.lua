--[[
  Adds one job to run later: at ARGV[2] ms from now on the server's clock
  (mode "delay") or at the epoch ms ARGV[2] (mode "eta"). A job already due
  goes straight to the stream.

  KEYS[1] {ns}:delayed:<queue>   ZSET of delayed jobs
  KEYS[2] {ns}:q:<queue>         the queue's stream (for a due job or a timer marker)
  KEYS[3] {ns}:jobs              the job index (see the prelude)

  ARGV[1] "delay" | "eta"
  ARGV[2] the delay (ms) or the due time (epoch ms)
  ARGV[3..] the entry's field/value pairs

  Returns the due time (ms); 0 when the job went straight to the stream.
]]
local delayed, stream, jobs = KEYS[1], KEYS[2], KEYS[3]
checkIndex(jobs)
local mode = oneOfArg(1, 'mode', { 'delay', 'eta' })
local due
if mode == 'delay' then due = intArg(2, 'delay (ms)', 0) else due = intArg(2, 'due time (epoch ms)', -MAX_INT) end
if #ARGV < 4 or #ARGV % 2 ~= 0 then badArg(#ARGV, 'entry fields: expected field/value pairs') end
local now = nowMs()
if mode == 'delay' then due = now + due end
local fields = {}
for i = 3, #ARGV do fields[#fields + 1] = ARGV[i] end
if due <= now then
  indexJob(jobs, fields, 'q', redis.call('XADD', stream, '*', unpack(fields)), queueOfKey(stream))
  return 0
end
schedule(delayed, stream, fields, due)
indexJob(jobs, fields, 'd', string.format('%d', due), queueOfKey(stream))
return due
