#!lua flags=allow-oom
--[[
  One heartbeat: renew this node's lease, or report it fenced; hand over the
  control requests waiting for it; report nodes whose lease expired (and,
  when asked, recoveries whose recoverer died) and the next lease to expire;
  the next due time of the delayed jobs of this node's queues. The number of
  keys varies.

  KEYS[1]    {ns}:nodes           ZSET node id -> lease deadline (ms)
  KEYS[2]    {ns}:recovering      ZSET dead node id -> its recoverer's deadline (ms)
  KEYS[3]    {ns}:ctl:<id>        LIST control requests for this node
  KEYS[4]    {ns}:leader          HASH node, token, until: the leader lease (only with ARGV[5] '1')
  KEYS[4..]  {ns}:delayed:<q>   the delayed sets of this node's queues, after the leader key if given (none: not looked at)
  KEYS[..n]  {ns}:q:<q>, {ns}:rd:<q>   last, ARGV[6] of them: the streams to sweep for orphans

  ARGV[1] node id
  ARGV[2] lease (ms)
  ARGV[3] most expired nodes to report
  ARGV[4] '1' to look for recoveries whose recoverer died too
  ARGV[5] '1': this node stands for leader (it has singleton duties): renew
          the leader lease if it holds it, take it if it has lapsed (the
          fencing token + 1), and report the holder; '0' or none: not looked at
  ARGV[6] how many stream keys end KEYS (none: 0): sweep them for orphans
  ARGV[7] with ARGV[6] > 0: how long (ms) a consumer must have been idle to be an orphan

  Returns { fenced (0|1), { expired node id, ... }, nextDueAt (-1 = none),
  now, nextExpiryAt (-1 = none: the earliest lease deadline of another
  live node, or of another node's leader lease), { control request, ... },
  { leader node id, fencing token } (empty unless ARGV[5] is '1'), lapsed (ms: how long this node's
  lease had run out when this beat renewed it, 0 when it had not), posted (1: sendControl flagged the
  lease since the last beat, whether or not its requests were still there to take) }; nextDueAt, now and nextExpiryAt on
  the server's clock (the caller converts by the difference).
  Fenced means taken: the node is no longer in the nodes set (a recovery
  claimed it, it left, or Redis lost it). A lease that ran out and that no
  recovery claimed yet is renewed: nobody took its jobs, and the claim
  (claimRecovery-3.lua) finds it live from now on. Leases run on Redis's
  clock, which goes on while Redis is stopped (SIGSTOP, a paused VM): on
  resuming, every lease has run out at once, and fencing them all would
  have every job running anywhere run twice.

  Idle cost matters (an idle node costs Redis only its heartbeats): TIME,
  one ZRANGE over the earliest deadlines (expired nodes, the next to expire,
  and this node's own: the node beating is usually the one whose lease runs
  out first; ZSCORE only when it is not among them), ZADD. The delayed sets
  are read only when passed (the caller passes them on some beats: timer
  markers in the streams are what wakes a node), the control list only when
  sendControl flagged the lease (half a millisecond added to its deadline),
  the recovering set only when asked, the streams only when given (the
  caller sweeps seldom).

  The orphan sweep: a consumer that holds entries though it is neither a
  node nor being recovered read them after it was recovered or forgotten
  (a read under way while its node was fenced; a node that crashed after
  Redis lost its registration). Nobody would ever recover it: it is made a
  recovery whose recoverer died, which this beat then reports like any
  other. One idle that long with nothing pending is deleted from the group.

  allow-oom: a lease must not depend on free memory. Redis at maxmemory
  (noeviction) refused the renewal, so leases expired and nodes fenced and
  re-registered in a loop while nothing drained. Renewing grows nothing
  (ZADD XX on a member that exists; the control list only shrinks).
]]
local nodes, recovering, ctl = KEYS[1], KEYS[2], KEYS[3]
local id, lease, most = ARGV[1], intArg(2, 'lease (ms)', 1), intArg(3, 'most expired nodes', 0)
local claims = oneOfArg(4, 'look for dead recoverers', { '0', '1' }) == '1'
local lead = ARGV[5] ~= nil and oneOfArg(5, 'stand for leader', { '0', '1' }) == '1'
local sweep = ARGV[6] == nil and 0 or intArg(6, 'streams to sweep', 0, #KEYS - 3)
local orphanIdle = sweep > 0 and intArg(7, 'orphan idle (ms)', 0) or 0
local now = nowMs()
-- One more than `most`: this node's own entry is usually among them.
local earliest = redis.call('ZRANGE', nodes, 0, most + 1, 'WITHSCORES')
local score
for i = 1, #earliest, 2 do
  if earliest[i] == id then score = tonumber(earliest[i + 1]) end
end
-- Not among the earliest deadlines, though the range was full: read it.
if not score and #earliest >= 2 * (most + 2) then score = tonumber(redis.call('ZSCORE', nodes, id)) end
if not score then return { 1, {}, -1, now, -1, {}, {}, 0, 0 } end
local lapsed = 0
if score < now then lapsed = math.floor(now - score) end
-- An integral deadline: also clears sendControl's flag.
redis.call('ZADD', nodes, 'XX', now + lease, id)

local control = {}
local posted = 0
if score ~= math.floor(score) then
  posted = 1
  control = takeControl(ctl, now)
end

local expired = {}
local nextExpiry = -1
for i = 1, #earliest, 2 do
  local n, s = earliest[i], tonumber(earliest[i + 1])
  if n ~= id then
    if s < now then
      if #expired < most then expired[#expired + 1] = n end
    elseif nextExpiry == -1 then
      nextExpiry = math.floor(s)
    end
  end
end
-- XINFO CONSUMERS gives each consumer as a flat list of field, value (7.2 adds fields).
local function consumerField(c, name)
  for i = 1, #c - 1, 2 do
    if c[i] == name then return c[i + 1] end
  end
end
-- The nodes, read once and only if some consumer is idle that long (every consumer of a live node
-- would otherwise cost a ZSCORE: with 20 nodes on a queue, more than an idle node's beats).
local members
local function isNode(name)
  if not members then
    members = {}
    for _, n in ipairs(redis.call('ZRANGE', nodes, 0, -1)) do members[n] = true end
  end
  return members[name] == true
end
for i = #KEYS - sweep + 1, #KEYS do
  local consumers = redis.pcall('XINFO', 'CONSUMERS', KEYS[i], GROUP)
  if type(consumers) == 'table' and not consumers.err then
    for _, c in ipairs(consumers) do
      local name = consumerField(c, 'name')
      if name and name ~= id and (tonumber(consumerField(c, 'idle')) or 0) >= orphanIdle
        and not isNode(name) and not redis.call('ZSCORE', recovering, name) then
        if (tonumber(consumerField(c, 'pending')) or 0) > 0 then
          -- An expired claim: the scan below reports it, and recover() claims it as a dead recoverer's.
          redis.call('ZADD', recovering, now - 1, name)
        else
          redis.call('XGROUP', 'DELCONSUMER', KEYS[i], GROUP, name)
        end
      end
    end
  end
end
if claims or sweep > 0 then
  local r = redis.call('ZRANGE', recovering, '-inf', '(' .. string.format('%d', now), 'BYSCORE', 'LIMIT', 0, most)
  for _, n in ipairs(r) do
    if n ~= id and #expired < most then expired[#expired + 1] = n end
  end
end

-- The leader lease: a deadline like a node's, never renewed once lapsed; the token only grows.
local leader = {}
local firstDelayed = 4
if lead then
  firstDelayed = 5
  local cur = redis.call('HMGET', KEYS[4], 'node', 'token', 'until')
  local holder, token, deadline = cur[1], tonumber(cur[2]) or 0, tonumber(cur[3]) or 0
  if holder == id and deadline >= now then
    redis.call('HSET', KEYS[4], 'until', now + lease)
  elseif not holder or deadline < now then
    token = token + 1
    holder = id
    redis.call('HSET', KEYS[4], 'node', id, 'token', token, 'until', now + lease)
  elseif nextExpiry == -1 or deadline < nextExpiry then
    -- Beat when the holder's lease lapses, to take over within one lease of its last renewal.
    nextExpiry = math.floor(deadline)
  end
  leader = { holder, token }
end

local nextDue = -1
for i = firstDelayed, #KEYS - sweep do
  local first = firstDue(KEYS[i])
  if first and (nextDue == -1 or first < nextDue) then nextDue = first end
end
return { 0, expired, nextDue, now, nextExpiry, control, leader, lapsed, posted }
