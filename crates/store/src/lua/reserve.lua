-- Reserves a player for a match about to commit in some pool (the cross-pool step:
-- the player's slot is the one place two pools' matches meet). Succeeds if the
-- player is free, already reserved by this match, or reserved by ARGV[2], a match
-- the caller found aborted.
-- KEYS: 1 player's reservation string ('MATCH|pool|time ms')
-- ARGV: 1 this match's reservation, 2 the reservation it may replace ('' for none)
-- Returns '' on success, else the reservation that holds the player.
local cur = redis.call('GET', KEYS[1])
if cur and cur ~= ARGV[1] and cur ~= ARGV[2] then return cur end
redis.call('SET', KEYS[1], ARGV[1])
return ''
