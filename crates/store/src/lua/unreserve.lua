-- Drops a reservation of a match that did not commit, if it still holds it.
-- KEYS: 1 player's reservation string
-- ARGV: 1 the match's reservation
-- Returns 1 if dropped.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
