-- Adds or updates a game server and offers its free slots in the free-slot set of
-- each (region, mode) it hosts. A re-registration keeps the allocations it holds.
-- KEYS: 1 servers hash, 2 heartbeat zset, 3 capacity hash, 4 address hash,
--       5 free-set names hash, 6 the server's allocations set, 7 leaving set,
--       8.. the free-slot sets of its region and modes
-- ARGV: 1 server id, 2 server JSON, 3 timeout ms, 4 capacity, 5 address
-- Returns the free slots offered.
local id = ARGV[1]
local old = redis.call('HGET', KEYS[5], id)
if old then
  for z in string.gmatch(old, '[^,]+') do redis.call('ZREM', z, id) end
end
local names = {}
for i = 8, #KEYS do names[#names + 1] = KEYS[i] end
redis.call('HSET', KEYS[1], id, ARGV[2])
redis.call('HSET', KEYS[3], id, ARGV[4])
redis.call('HSET', KEYS[4], id, ARGV[5])
redis.call('HSET', KEYS[5], id, table.concat(names, ','))
redis.call('SREM', KEYS[7], id)
redis.call('ZADD', KEYS[2], now_ms() + tonumber(ARGV[3]), id)
local free = tonumber(ARGV[4]) - redis.call('SCARD', KEYS[6])
for _, z in ipairs(names) do
  if free > 0 then redis.call('ZADD', z, free, id) else redis.call('ZREM', z, id) end
end
return free
