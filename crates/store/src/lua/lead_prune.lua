-- A pool leader's look at the tickets it read: returns those of ARGV[2..] no
-- longer searching (cancelled, withdrawn, matched in another pool), so the
-- leader forgets them. Its tickets stay in the queue while they search (see
-- lead_read.lua), so there is nothing to drop here. Fenced like every call of a
-- leader's.
-- KEYS: 1 state hash, 2 the pool's fencing counter
-- ARGV: 1 the leader's fencing token, then the ids to look at
-- Returns the ids no longer searching.
fenced(KEYS[2], ARGV[1])
local gone = {}
local step = 1000
for from = 2, #ARGV, step do
  local part = {}
  for k = from, math.min(from + step - 1, #ARGV) do part[#part + 1] = ARGV[k] end
  local states = redis.call('HMGET', KEYS[1], unpack(part))
  for k, id in ipairs(part) do
    if states[k] ~= 's' then gone[#gone + 1] = id end
  end
end
return gone
