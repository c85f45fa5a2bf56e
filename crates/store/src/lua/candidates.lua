-- Registers a worker as a candidate to lead the pool (it runs
-- COORDINATION=leader) until its lease runs out, or withdraws it (lease 0); drops
-- the candidates whose lease ran out; returns the live ones. Workers that only
-- claim never register, so a pool is never handed to one that would not lead it.
-- KEYS: 1 the pool's candidates zset (member: worker id, score: lease expiry ms)
-- ARGV: 1 worker id, 2 lease ms (0: withdraw)
local now = now_ms()
local lease = tonumber(ARGV[2])
if lease > 0 then
  redis.call('ZADD', KEYS[1], now + lease, ARGV[1])
else
  redis.call('ZREM', KEYS[1], ARGV[1])
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. now)
return redis.call('ZRANGE', KEYS[1], 0, -1)
