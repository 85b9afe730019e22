--[[
  Takes every control request waiting for a node (when it was told of them
  out of band, before its next heartbeat would hand them over), leaving
  out those past their own deadline.

  KEYS[1] {ns}:ctl:<id>   LIST control requests for the node

  Returns { request, ... }.
]]
return takeControl(KEYS[1], nowMs())
