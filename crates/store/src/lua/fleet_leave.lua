-- Takes a server out of allocation: it keeps its current allocations.
-- KEYS: 1 servers hash, 2 free-set names hash, 3 leaving set
-- ARGV: 1 server id
-- Returns 1 if the server is known.
local id = ARGV[1]
if redis.call('HEXISTS', KEYS[1], id) == 0 then return 0 end
redis.call('SADD', KEYS[3], id)
for z in string.gmatch(redis.call('HGET', KEYS[2], id) or '', '[^,]+') do
  redis.call('ZREM', z, id)
end
return 1
