-- Queues a new ticket in its pool.
-- KEYS: 1 queue zset, 2 ticket data hash, 3 state hash
-- ARGV: 1 ticket id, 2 ticket JSON, 3 rating
-- Returns 1 when queued, 0 when a ticket with that id already exists.
if redis.call('HSETNX', KEYS[2], ARGV[1], ARGV[2]) == 0 then
  return 0
end
redis.call('HSET', KEYS[3], ARGV[1], 'q')
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
return 1
