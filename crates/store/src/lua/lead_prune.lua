-- A pool leader's look at the tickets it holds: drops those no longer searching
-- (cancelled, withdrawn, matched in another pool) and returns their ids, so the
-- leader forgets them too. Fenced like every write of a leader's.
-- KEYS: 1 state hash, 2 the leader's held zset, 3 the pool's fencing counter
-- ARGV: 1 the leader's fencing token, then the ids to look at (none: all it holds)
-- Returns the ids dropped.
fenced(KEYS[3], ARGV[1])
local ids = {}
for i = 2, #ARGV do ids[#ids + 1] = ARGV[i] end
if #ids == 0 then ids = redis.call('ZRANGE', KEYS[2], 0, -1) end
local gone = {}
local step = 1000
for from = 1, #ids, step do
  local part = {}
  for k = from, math.min(from + step - 1, #ids) do part[#part + 1] = ids[k] end
  local states = redis.call('HMGET', KEYS[1], unpack(part))
  for k, id in ipairs(part) do
    if states[k] ~= 's' and redis.call('ZSCORE', KEYS[2], id) then gone[#gone + 1] = id end
  end
end
for from = 1, #gone, step do
  redis.call('ZREM', KEYS[2], unpack(gone, from, math.min(from + step - 1, #gone)))
end
return gone
