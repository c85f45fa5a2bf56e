-- Removes a server whose heartbeat lapsed, with its allocations (nothing if it
-- heartbeated meanwhile).
-- KEYS: 1 servers hash, 2 heartbeat zset, 3 capacity hash, 4 address hash,
--       5 free-set names hash, 6 the server's allocations set, 7 allocations hash,
--       8 leaving set
-- ARGV: 1 server id
-- Returns {} if the server is live or unknown, else {'gone', allocation value, ...}.
local id = ARGV[1]
local exp = redis.call('ZSCORE', KEYS[2], id)
if not exp or tonumber(exp) > now_ms() then return {} end
for z in string.gmatch(redis.call('HGET', KEYS[5], id) or '', '[^,]+') do
  redis.call('ZREM', z, id)
end
local out = {'gone'}
local ids = redis.call('SMEMBERS', KEYS[6])
if #ids > 0 then
  local vals = redis.call('HMGET', KEYS[7], unpack(ids))
  for i = 1, #ids do
    if vals[i] then out[#out + 1] = vals[i] end
  end
  redis.call('HDEL', KEYS[7], unpack(ids))
end
redis.call('DEL', KEYS[6])
redis.call('HDEL', KEYS[1], id)
redis.call('HDEL', KEYS[3], id)
redis.call('HDEL', KEYS[4], id)
redis.call('HDEL', KEYS[5], id)
redis.call('ZREM', KEYS[2], id)
redis.call('SREM', KEYS[8], id)
return out
