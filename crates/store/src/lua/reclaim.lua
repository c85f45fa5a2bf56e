-- Returns every ticket of a worker whose lease has expired to the queue and drops
-- the lease. Does nothing if the lease is still live (the worker heartbeated since
-- the supervisor looked), so concurrent supervisors are safe.
-- KEYS: 1 queue zset, 2 state hash, 3 worker's held zset, 4 leases zset
-- ARGV: 1 worker id
-- Returns the number of tickets requeued, or -1 if the lease is live.
local expiry = redis.call('ZSCORE', KEYS[4], ARGV[1])
if expiry and tonumber(expiry) > now_ms() then return -1 end
redis.call('ZREM', KEYS[4], ARGV[1])
return requeue(KEYS[1], KEYS[2], KEYS[3], redis.call('ZRANGE', KEYS[3], 0, -1))
