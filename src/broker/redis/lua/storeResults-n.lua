--[[
  Stores a settle batch's results, in order (a STARTED record before the
  same job's final one), and announces the final ones to the clients that
  wait: one call instead of a SET per job and an LPUSH + PEXPIRE per reply
  list, so the node builds one command per batch, not one per result
  (inside it, an LLEN, an LPUSH and a PEXPIRE per reply list).

  KEYS[1 .. R]       <ns>:res:<id> of the i-th result
  KEYS[R+1 .. R+L]   <ns>:reply:<client> of the j-th reply list
  KEYS[R+L+1]        {ns}:unapplied:<call>: the job ids whose settlements the
                     fetch script before this call did not apply (their entries
                     were no longer this node's: recovered, the node fenced):
                     their results are stored (and announced) only where none
                     is, so the outcome of the run that replaced them stays;
                     where none is (Redis lost its data, or the other run has
                     written nothing yet) the outcome of this run is all there
                     is. Read, then deleted.

  ARGV[1]   L, number of reply lists
  ARGV[2]   most entries a reply list keeps (LTRIM of a list flagged below)
  ARGV[3]   a record rides inline only while its list holds fewer entries than this
  ARGV[4]   ttl of a reply list (ms)
  then R groups of 4, one per result:
    ttl (ms), record (msgpack),
    reply: 0 = no announcement, j = announce to list j with the record
           inline when the list is short, -j = announce the id only,
    the job's id
  then L trim flags, one per list: '1' = LTRIM it now

  An inline announcement is the byte 0xFF then the record: a client takes it
  without reading the result back. No id starts with that byte (UTF-8 never
  does). A list its client does not read grows past ARGV[3] entries, and
  from then on gets ids only: what a client that never waits costs stays
  bounded by ids, not records.

  Returns how many results were stored.
]]
local nl = intArg(1, 'number of reply lists', 0)
local nr = #KEYS - nl - 1
if nr < 0 then badArg(1, 'number of reply lists: expected at most #KEYS - 1 = ' .. (#KEYS - 1)) end
local unapplied = KEYS[#KEYS]
if #ARGV ~= 4 + 4 * nr + nl then
  error({ err = 'ERR prefork: storeResults takes 4 + 4 per result + 1 per reply list args: ' .. nr .. ' results, ' .. nl .. ' lists, ' .. #ARGV .. ' args' })
end
local keep = intArg(2, 'reply list bound', 1)
local inlineWhile = intArg(3, 'inline while shorter than', 0)
local replyTtl = intArg(4, 'reply list ttl (ms)', 1)
local ttls, replies = {}, {}
for i = 1, nr do
  local at = 4 + 4 * (i - 1)
  ttls[i] = intArg(at + 1, 'ttl (ms)', 1)
  replies[i] = intArg(at + 3, 'reply list index', -nl, nl)
end
for j = 1, nl do oneOfArg(4 + 4 * nr + j, 'trim flag', { '0', '1' }) end

-- A reply list of another type (another program wrote that key) is not
-- announced to; the rest of the batch is written, and the call fails last,
-- naming it, so the node logs the job. (LLEN before any write: it is also
-- what the inline rule reads.)
local lengths, bad = {}, nil
for j = 1, nl do
  local n = redis.pcall('LLEN', KEYS[nr + j])
  if type(n) == 'number' then lengths[j] = n else bad = bad or KEYS[nr + j] end
end
-- Usually empty: one SMEMBERS per batch, not a check per result. Deleted at
-- the end, not here: a DEL first would make Redis let every later write of
-- this script through at maxmemory (a script that has written is let finish),
-- where the first SET must be refused and the batch kept for later.
local late = nil
local left = redis.call('SMEMBERS', unapplied)
if #left > 0 then
  late = {}
  for _, id in ipairs(left) do late[id] = true end
end
-- One LPUSH per list (of its entries in settlement order), not one per result.
local pushes = {}
local stored = 0
for i = 1, nr do
  local at = 4 + 4 * (i - 1)
  local record = ARGV[at + 2]
  -- A late job's records are written only if it had none when its first one came (the batch may hold its
  -- STARTED record before its final one: both or neither).
  local id = ARGV[at + 4]
  local written = true
  if late and late[id] then
    if late[id] == true then
      if redis.call('EXISTS', KEYS[i]) == 0 then late[id] = 'write' else late[id] = 'skip' end
    end
    written = late[id] == 'write'
  end
  -- Lua 5.1: no continue; a result not written is not announced.
  if written then
    redis.call('SET', KEYS[i], record, 'PX', ttls[i])
    stored = stored + 1
    local reply = replies[i]
    local j = math.abs(reply)
    local n = lengths[j]
    if reply ~= 0 and n ~= nil then
      local entries = pushes[j]
      if entries == nil then
        entries = {}
        pushes[j] = entries
      end
      if reply > 0 and n < inlineWhile then
        entries[#entries + 1] = '\255' .. record
      else
        entries[#entries + 1] = ARGV[at + 4]
      end
      lengths[j] = n + 1
    end
  end
end
for j = 1, nl do
  local entries = pushes[j]
  if entries ~= nil then
    local list = KEYS[nr + j]
    -- In chunks: unpack() puts every value on Lua's stack.
    for from = 1, #entries, 1000 do
      redis.call('LPUSH', list, unpack(entries, from, math.min(from + 999, #entries)))
    end
    if ARGV[4 + 4 * nr + j] == '1' then redis.call('LTRIM', list, 0, keep - 1) end
    redis.call('PEXPIRE', list, replyTtl)
  end
end
if late then redis.call('DEL', unapplied) end
if bad then
  return redis.error_reply('WRONGTYPE prefork: the reply list ' .. bad .. ' holds another type: results stored, not announced to it')
end
return stored
