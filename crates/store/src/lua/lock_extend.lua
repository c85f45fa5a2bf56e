-- Extends a token lock, only for its holder.
-- KEYS: 1 the lock
-- ARGV: 1 the holder's token, 2 ttl ms (from now)
-- Returns 1 if extended, 0 if the token does not hold the lock.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
