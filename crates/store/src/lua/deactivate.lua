-- Gives back a player's activation of a ticket that could not be queued (another
-- player of its party was busy): only if the ticket is still the one for its mode.
-- KEYS: 1 player's active hash, 2 player's ticket index hash
-- ARGV: 1 ticket id, 2 mode
-- Returns 1 if the activation was given back, 0 otherwise.
redis.call('HDEL', KEYS[2], ARGV[1])
local cur = redis.call('HGET', KEYS[1], ARGV[2])
if cur and string.match(cur, '^[^|]*') == ARGV[1] then
  redis.call('HDEL', KEYS[1], ARGV[2])
  return 1
end
return 0
