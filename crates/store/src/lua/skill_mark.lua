-- Raises a player's freshness mark for a mode: the version of the newest rating
-- being applied for them. A ticket carrying an older version is refused as stale
-- (activate.lua). Never lowers the mark.
-- KEYS: 1 player's marks hash (mode -> version)
-- ARGV: 1 mode, 2 version, 3 ttl s
local cur = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
if tonumber(ARGV[2]) > cur then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
end
redis.call('EXPIRE', KEYS[1], ARGV[3])
return 0
