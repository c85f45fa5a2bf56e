-- Extends a worker's lease on a pool. The lease covers every ticket it holds there.
-- KEYS: 1 leases zset, 2 worker's held zset, 3 the pool's fencing counter
-- ARGV: 1 worker id, 2 lease ms, 3 the leader's fencing token ('' for a worker that
--       is not a pool leader)
-- Returns how many tickets the worker holds in the pool.
fenced(KEYS[3], ARGV[3])
redis.call('ZADD', KEYS[1], now_ms() + tonumber(ARGV[2]), ARGV[1])
return redis.call('ZCARD', KEYS[2])
