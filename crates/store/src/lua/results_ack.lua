-- Forgets results the rating service applied.
-- KEYS: 1 results hash, 2 results zset
-- ARGV: match ids
if #ARGV == 0 then return 0 end
redis.call('ZREM', KEYS[2], unpack(ARGV))
return redis.call('HDEL', KEYS[1], unpack(ARGV))
