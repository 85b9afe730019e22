--[[
  One heartbeat: renew this node's lease, or report it fenced; report nodes
  whose lease expired and recoveries whose recoverer died; the next due time
  of the delayed jobs of this node's queues. The number of keys varies.

  KEYS[1]    {ns}:nodes           ZSET node id -> lease deadline (ms)
  KEYS[2]    {ns}:recovering      ZSET dead node id -> its recoverer's deadline (ms)
  KEYS[3]    {ns}:node:<id>       HASH node info (expires with the lease)
  KEYS[4..]  {ns}:q:<q>:delayed   the delayed sets of this node's queues

  ARGV[1] node id
  ARGV[2] lease (ms)
  ARGV[3] most expired nodes to report

  Returns { fenced (0|1), { expired node id, ... }, nextDueAt (-1 = none), now },
  nextDueAt and now on the server's clock (the caller converts by the difference).
  A lease that expired is never renewed: the node may already be recovered.
]]
local nodes, recovering, info = KEYS[1], KEYS[2], KEYS[3]
local id, lease, most = ARGV[1], intArg(2, 'lease (ms)', 1), intArg(3, 'most expired nodes', 0)
local now = nowMs()
local score = redis.call('ZSCORE', nodes, id)
if not score or tonumber(score) < now then return { 1, {}, -1 } end
redis.call('ZADD', nodes, 'XX', now + lease, id)
redis.call('PEXPIRE', info, 2 * lease)

local expired = {}
local function collect(zset)
  local r = redis.call('ZRANGE', zset, '-inf', '(' .. string.format('%d', now), 'BYSCORE', 'LIMIT', 0, most)
  for _, n in ipairs(r) do
    if n ~= id and #expired < most then expired[#expired + 1] = n end
  end
end
collect(nodes)
collect(recovering)

local nextDue = -1
for i = 4, #KEYS do
  local first = firstDue(KEYS[i])
  if first and (nextDue == -1 or first < nextDue) then nextDue = first end
end
return { 0, expired, nextDue, now }
