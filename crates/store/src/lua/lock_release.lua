-- Frees a token lock, only for its holder.
-- KEYS: 1 the lock
-- ARGV: 1 the holder's token
-- Returns 1 if freed, 0 if the token does not hold the lock.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
