-- Makes a ticket the player's active one, compare-and-set: only if the player has
-- no active ticket or the active one is ARGV[3] (which the caller found finished).
-- KEYS: 1 player's active ticket string, 2 player's ticket index hash
-- ARGV: 1 new ticket id, 2 pool name, 3 expected current ticket id ('' for none), 4 index ttl s
-- Returns '' on success, else the id of the player's current active ticket.
local cur = redis.call('GET', KEYS[1])
if cur and cur ~= ARGV[3] then return cur end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('EXPIRE', KEYS[2], ARGV[4])
return ''
