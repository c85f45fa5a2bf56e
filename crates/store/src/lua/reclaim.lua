-- Returns every ticket of a worker whose lease has expired to the queue and drops
-- the lease. Does nothing if the lease is still live (the worker heartbeated since
-- the supervisor looked), so concurrent supervisors are safe.
-- Requeued tickets wake the pool's workers (see enqueue.lua).
-- KEYS: 1 queue zset, 2 state hash, 3 worker's held zset, 4 leases zset, 5 armed flag,
--       6 the pool leader's lock, 7 the pool's arrivals list (see arrived)
-- ARGV: 1 worker id, 2 wake channel, 3 pool name
-- Returns the number of tickets requeued, or -1 if the lease is live.
local expiry = redis.call('ZSCORE', KEYS[4], ARGV[1])
if expiry and tonumber(expiry) > now_ms() then return -1 end
redis.call('ZREM', KEYS[4], ARGV[1])
local n = requeue(KEYS[1], KEYS[2], KEYS[3], redis.call('ZRANGE', KEYS[3], 0, -1), KEYS[6], KEYS[7])
if n > 0 then wake(KEYS[5], ARGV[2], ARGV[3]) end
return n
