-- Queues a new ticket's entry in one of its pools.
-- If the pool is armed (a claim ran since the last wake-up), disarms it and
-- publishes the pool's name to wake its workers.
-- KEYS: 1 queue zset, 2 ticket data hash, 3 state hash, 4 since zset (see
--       since_add), 5 armed flag, 6 the pool leader's lock, 7 the pool's
--       arrivals list (see arrived)
-- ARGV: 1 ticket id, 2 ticket JSON, 3 rating, 4 enqueue time (ms), 5 wake channel,
--       6 pool name
-- Returns 1 when queued, 0 when the entry already exists, 2 when the ticket was
-- withdrawn before its entry got here (the withdrawal left its state behind).
if redis.call('HSETNX', KEYS[2], ARGV[1], ARGV[2]) == 0 then
  return 0
end
if redis.call('HEXISTS', KEYS[3], ARGV[1]) == 1 then
  return 2
end
redis.call('HSET', KEYS[3], ARGV[1], 'q')
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
since_add(KEYS[4], ARGV[4], ARGV[1])
arrived(KEYS[6], KEYS[7], {ARGV[1]})
wake(KEYS[5], ARGV[5], ARGV[6])
return 1
