--[[
  Moves dead jobs back to their queue with attempt and redeliveries reset.
  A workflow's job stays dead: its workflow recorded its failure when it
  died (and went on, or ended), so a rerun would belong to nothing.

  KEYS[1] {ns}:dead:<q>
  KEYS[2] {ns}:q:<q>
  KEYS[3] {ns}:jobs         the job index (see the prelude)

  ARGV[1] '1' = every dead job, '0' = only the jobs listed next
  ARGV[2..] job ids (the entry id stands in for a job with no id field)

  Returns how many jobs were moved (a workflow's listed is not).
]]
local dead, stream = KEYS[1], KEYS[2]
local all = oneOfArg(1, 'all flag', { '0', '1' }) == '1'
local wanted = {}
for i = 2, #ARGV do wanted[ARGV[i]] = true end
local moved = 0
local after = '-'
while true do
  local entries = redis.call('XRANGE', dead, after, '+', 'COUNT', 500)
  if #entries == 0 then break end
  for _, e in ipairs(entries) do
    local id, fields = e[1], e[2]
    local jobId = getField(fields, 'id')
    if (all or wanted[id] or (jobId and wanted[jobId])) and not wfRefOf(fields) then
      local job = {}
      for i = 1, #fields, 2 do
        local f = fields[i]
        if f ~= 'reason' and f ~= 'diedAt' then
          job[#job + 1] = f
          if f == 'attempt' or f == 'redeliveries' then job[#job + 1] = '0' else job[#job + 1] = fields[i + 1] end
        end
      end
      indexJob(KEYS[3], job, 'q', redis.call('XADD', stream, '*', unpack(job)), queueOfKey(stream))
      redis.call('XDEL', dead, id)
      moved = moved + 1
    end
  end
  after = '(' .. entries[#entries][1]
end
return moved
