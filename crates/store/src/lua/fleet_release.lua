-- Frees the slot of an allocation on a server and offers it again if the server is
-- live and not leaving.
-- KEYS: 1 the server's allocations set, 2 allocations hash, 3 capacity hash,
--       4 free-set names hash, 5 leaving set, 6 heartbeat zset
-- ARGV: 1 server id, 2 allocation id
-- Returns 1 if the allocation held a slot there.
local id = ARGV[1]
if redis.call('SREM', KEYS[1], ARGV[2]) == 0 then return 0 end
redis.call('HDEL', KEYS[2], ARGV[2])
local cap = redis.call('HGET', KEYS[3], id)
local exp = redis.call('ZSCORE', KEYS[6], id)
if cap and exp and tonumber(exp) > now_ms() and redis.call('SISMEMBER', KEYS[5], id) == 0 then
  local free = tonumber(cap) - redis.call('SCARD', KEYS[1])
  for z in string.gmatch(redis.call('HGET', KEYS[4], id) or '', '[^,]+') do
    if free > 0 then redis.call('ZADD', z, free, id) end
  end
end
return 1
