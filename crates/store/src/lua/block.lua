-- A player blocks another: adds ARGV[1] to the player's block list unless it
-- already holds ARGV[2] players.
-- KEYS: 1 the player's block list (set)
-- ARGV: 1 the player blocked, 2 most players in the list
-- Returns 1 when added (or already there), 0 when the list is full.
if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 1 then return 1 end
if redis.call('SCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('SADD', KEYS[1], ARGV[1])
return 1
