-- Takes a token lock if free, and counts one more holder on its fencing counter.
-- KEYS: 1 the lock (holds its holder's token), 2 its fencing counter (never expires)
-- ARGV: 1 the taker's token, 2 ttl ms
-- Returns the new fencing token, or 0 if the lock is held.
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return redis.call('INCR', KEYS[2])
end
return 0
