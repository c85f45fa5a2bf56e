-- Gives back a player's activation of a ticket that could not be queued (another
-- player of its party was busy): only if the ticket is still the active one.
-- KEYS: 1 player's active ticket string, 2 player's ticket index hash
-- ARGV: 1 ticket id
-- Returns 1 if the activation was given back, 0 otherwise.
redis.call('HDEL', KEYS[2], ARGV[1])
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
