-- Records that a player's connection dropped ('gone') or came back ('back') during a
-- ready check. A drop makes the match due when the player's grace runs out, unless
-- something is due sooner.
-- KEYS: 1 lifecycle hash, 2 due zset
-- ARGV: 1 match id, 2 player, 3 'gone' or 'back' (the grace is the hash's 'gr')
-- Returns 1 if recorded, 0 if the match is not in its ready check.
if redis.call('HGET', KEYS[1], 'st') ~= 'requires_acceptance' then return 0 end
local field = 'g:' .. ARGV[2]
if ARGV[3] == 'back' then
  redis.call('HDEL', KEYS[1], field)
  return 1
end
local now = now_ms()
if redis.call('HSETNX', KEYS[1], field, now) == 1 then
  local at = now + tonumber(redis.call('HGET', KEYS[1], 'gr') or 0)
  local cur = redis.call('ZSCORE', KEYS[2], ARGV[1])
  if not cur or tonumber(cur) > at then redis.call('ZADD', KEYS[2], at, ARGV[1]) end
end
return 1
