-- Extends a worker's lease on a pool. The lease covers every ticket it holds there.
-- KEYS: 1 leases zset, 2 worker's held zset
-- ARGV: 1 worker id, 2 lease ms
-- Returns how many tickets the worker holds in the pool.
redis.call('ZADD', KEYS[1], now_ms() + tonumber(ARGV[2]), ARGV[1])
return redis.call('ZCARD', KEYS[2])
