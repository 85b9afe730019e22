#!lua flags=allow-oom
--[[
  Creates the consumer group on each stream, and the stream if missing
  (MKSTREAM); a group that exists already is left as it is.

  KEYS[1..] the streams ({ns}:q:<q>, {ns}:rd:<q>)

  Returns the number of streams.

  allow-oom: a node waits for work by blocking on its queues' groups. At
  maxmemory Redis refuses XGROUP CREATE on its own, so a node started then
  could never block: it would poll, and warn, twice a second until Redis
  had room. An empty stream and its group are a few hundred bytes.
]]
for i = 1, #KEYS do
  local r = redis.pcall('XGROUP', 'CREATE', KEYS[i], GROUP, '0', 'MKSTREAM')
  if type(r) == 'table' and r.err and not string.find(r.err, 'BUSYGROUP', 1, true) then error(r.err) end
end
return #KEYS
