--[[
  Adds one job unless it duplicates one that has not ended: a job whose id
  the producer chose (`ownId`) and that is in the job index, or ended with
  its result still kept (its ended-marker key lives that long); a job whose
  unique key is held by a job still in the job index. A lock whose holder
  left the index (ended, purged, dead) is stale: the new job takes it.

  KEYS[1] {ns}:q:<queue>         the queue's stream
  KEYS[2] {ns}:delayed:<queue>   its delayed set
  KEYS[3] {ns}:jobs              the job index (see the prelude)
  then, as ARGV[1] says: the ended-marker {ns}:unique:i:<job id> ('i'),
  the unique lock {ns}:unique:<key> ('u'), or both in that order ('iu')

  ARGV[1] '' | 'i' | 'u' | 'iu'
  ARGV[2] the unique lock's time to live in ms (0: until the job ends)
  ARGV[3] 'now' | 'delay' | 'eta'
  ARGV[4] the delay (ms) or the due time (epoch ms); ignored for 'now'
  ARGV[5..] the entry's field/value pairs

  Returns { id of the job it duplicates, or '' when added; the due time
  (ms on the server's clock) or 0 when ready now }.
]]
local stream, delayed, jobs = KEYS[1], KEYS[2], KEYS[3]
checkIndex(jobs)
local spec = oneOfArg(1, 'unique spec', { '', 'i', 'u', 'iu' })
if #KEYS ~= 3 + #spec then badArg(1, 'unique spec: "' .. spec .. '" names ' .. #spec .. ' keys after the first three, got ' .. (#KEYS - 3)) end
local ttl = intArg(2, 'unique ttl (ms)', 0)
local mode = oneOfArg(3, 'mode', { 'now', 'delay', 'eta' })
local due = 0
if mode == 'delay' then due = intArg(4, 'delay (ms)', 0) elseif mode == 'eta' then due = intArg(4, 'due time (epoch ms)', -MAX_INT) end
if #ARGV < 6 or #ARGV % 2 ~= 0 then badArg(#ARGV, 'entry fields: expected field/value pairs') end
local fields = {}
for i = 5, #ARGV do fields[#fields + 1] = ARGV[i] end
local id = jobIdOf(fields)
if not id or id == '' then badArg(6, 'job id') end

local ended, lock = nil, nil
if spec == 'i' or spec == 'iu' then ended = KEYS[4] end
if spec == 'u' then lock = KEYS[4] elseif spec == 'iu' then lock = KEYS[5] end

if ended and (redis.call('HEXISTS', jobs, id) == 1 or redis.call('EXISTS', ended) == 1) then return { id, 0 } end
if lock then
  local holder = redis.call('GET', lock)
  if holder and redis.call('HEXISTS', jobs, holder) == 1 then return { holder, 0 } end
end

local now = nowMs()
if mode == 'delay' then due = now + due end
local queue = queueOfKey(stream)
if mode == 'now' or due <= now then
  indexJob(jobs, fields, 'q', redis.call('XADD', stream, '*', unpack(fields)), queue)
  due = 0
else
  schedule(delayed, stream, fields, due)
  indexJob(jobs, fields, 'd', string.format('%d', due), queue)
end
if lock then
  if ttl > 0 then redis.call('SET', lock, id, 'PX', ttl) else redis.call('SET', lock, id) end
end
return { '', due }
