-- Seed 001's token-checked release: deletes the lock only if it still holds this
-- caller's token, so a caller whose lock expired cannot free someone else's.
-- KEYS: 1 lock key. ARGV: 1 token. Returns 1 if deleted.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
