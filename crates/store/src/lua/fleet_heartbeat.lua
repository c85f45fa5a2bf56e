-- Keeps a game server live and lists its allocations. A server that lapsed and was
-- passed over by an allocation (but not yet removed) offers its free slots again.
-- KEYS: 1 servers hash, 2 heartbeat zset, 3 capacity hash, 4 free-set names hash,
--       5 the server's allocations set, 6 allocations hash, 7 leaving set
-- ARGV: 1 server id, 2 timeout ms
-- Returns {} if the server is unknown, else {'ok', allocation value, ...}.
local id = ARGV[1]
if redis.call('HEXISTS', KEYS[1], id) == 0 then return {} end
redis.call('ZADD', KEYS[2], now_ms() + tonumber(ARGV[2]), id)
if redis.call('SISMEMBER', KEYS[7], id) == 0 then
  local free = tonumber(redis.call('HGET', KEYS[3], id)) - redis.call('SCARD', KEYS[5])
  for z in string.gmatch(redis.call('HGET', KEYS[4], id) or '', '[^,]+') do
    if free > 0 then redis.call('ZADD', z, free, id) else redis.call('ZREM', z, id) end
  end
end
local out = {'ok'}
local ids = redis.call('SMEMBERS', KEYS[5])
if #ids > 0 then
  local vals = redis.call('HMGET', KEYS[6], unpack(ids))
  for i = 1, #ids do
    if vals[i] then out[#out + 1] = vals[i] end
  end
end
return out
