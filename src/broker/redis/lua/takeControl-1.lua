--[[
  Takes every control request waiting for a node (when it was told of them
  out of band, before its next heartbeat would hand them over).

  KEYS[1] {ns}:ctl:<id>   LIST control requests for the node

  Returns { request, ... }.
]]
local r = redis.call('LRANGE', KEYS[1], 0, -1)
if #r > 0 then redis.call('DEL', KEYS[1]) end
return r
