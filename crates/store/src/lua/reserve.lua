-- Reserves players for a match about to commit in some pool (the cross-pool step:
-- a player's slot is the one place two pools' matches meet). Each succeeds if the
-- player is free, already reserved by this match, or reserved by ARGV[2], a match
-- the caller found aborted. On a cluster a call takes one player (one slot); a
-- single node takes a match's players in one call.
-- KEYS: the players' reservation strings ('MATCH|pool|time ms')
-- ARGV: 1 this match's reservation, 2 the reservation it may replace ('' for none)
-- Returns, per player, '' on success, else the reservation that holds the player.
local out = {}
for i, key in ipairs(KEYS) do
  local cur = redis.call('GET', key)
  if cur and cur ~= ARGV[1] and cur ~= ARGV[2] then
    out[i] = cur
  else
    redis.call('SET', key, ARGV[1])
    out[i] = ''
  end
end
return out
