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
  KEYS[4..]  {ns}:delayed:<q>   the delayed sets of this node's queues

  ARGV[1] node id
  ARGV[2] lease (ms)
  ARGV[3] most expired nodes to report
  ARGV[4] '1' to look for recoveries whose recoverer died too

  Returns { fenced (0|1), { expired node id, ... }, nextDueAt (-1 = none),
  now, nextExpiryAt (-1 = none: the earliest lease deadline of another
  live node), { control request, ... } }; nextDueAt, now and nextExpiryAt on
  the server's clock (the caller converts by the difference).
  A lease that expired is never renewed: the node may already be recovered.

  Idle cost matters (an idle node costs Redis only its heartbeats): TIME,
  ZSCORE, ZADD, one ZRANGE over the nodes (expired ones and the next to
  expire), one ZRANGE per delayed set. The control list is read only when
  sendControl flagged the lease (half a millisecond added to its deadline);
  the recovering set only when asked.

  allow-oom: a lease must not depend on free memory. Redis at maxmemory
  (noeviction) refused the renewal, so leases expired and nodes fenced and
  re-registered in a loop while nothing drained. Renewing grows nothing
  (ZADD XX on a member that exists; the control list only shrinks).
]]
local nodes, recovering, ctl = KEYS[1], KEYS[2], KEYS[3]
local id, lease, most = ARGV[1], intArg(2, 'lease (ms)', 1), intArg(3, 'most expired nodes', 0)
local claims = oneOfArg(4, 'look for dead recoverers', { '0', '1' }) == '1'
local now = nowMs()
local score = redis.call('ZSCORE', nodes, id)
if not score or tonumber(score) < now then return { 1, {}, -1, now, -1, {} } end
score = tonumber(score)
-- An integral deadline: also clears sendControl's flag.
redis.call('ZADD', nodes, 'XX', now + lease, id)

local control = {}
if score ~= math.floor(score) then
  control = redis.call('LRANGE', ctl, 0, -1)
  redis.call('DEL', ctl)
end

local expired = {}
local nextExpiry = -1
local earliest = redis.call('ZRANGE', nodes, 0, most, 'WITHSCORES')
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
if claims then
  local r = redis.call('ZRANGE', recovering, '-inf', '(' .. string.format('%d', now), 'BYSCORE', 'LIMIT', 0, most)
  for _, n in ipairs(r) do
    if n ~= id and #expired < most then expired[#expired + 1] = n end
  end
end

local nextDue = -1
for i = 4, #KEYS do
  local first = firstDue(KEYS[i])
  if first and (nextDue == -1 or first < nextDue) then nextDue = first end
end
return { 0, expired, nextDue, now, nextExpiry, control }
