-- Forgets a pool from the supervisors' registry, unless a supervisor noted it
-- since it was found unsupervised (see mm_store::Registry).
-- KEYS: 1 the registry (zset: pool name -> when last supervised, ms)
-- ARGV: 1 the pool's name, 2 the time before which it counts as unsupervised
-- Returns 1 when forgotten, else 0.
local at = redis.call('ZSCORE', KEYS[1], ARGV[1])
if at and tonumber(at) < tonumber(ARGV[2]) then
  return redis.call('ZREM', KEYS[1], ARGV[1])
end
return 0
